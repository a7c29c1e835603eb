// problem.yaml: any bytes either load as a problem or throw cuset::Error (never crash, hang or
// another exception type).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const cuset::Problem p = cuset::parseProblem(std::string(reinterpret_cast<const char*>(data), size), "fuzz/problem.yaml", "fuzz");
    for (const auto& set : p.sizeSets) (void)p.sizes(set.name);
  } catch (const cuset::Error&) {
  }
  return 0;
}
