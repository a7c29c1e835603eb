// results.jsonl records as `cuset report` and `--resume` read them.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const nlohmann::json j = cuset::parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    const cuset::EvalResult r = cuset::evalResultFromJson(j);
    (void)cuset::dumpJson(cuset::toJson(r));
    (void)cuset::speedupOf(r);
  } catch (const cuset::Error&) {
  }
  return 0;
}
