// Candidate batches: any bytes read as candidates (each line a candidate or a read error); code
// extraction from responses included.
#include <cstddef>
#include <cstdint>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/candidate/candidate.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    for (const auto& c : cuset::readCandidates(cuset::fuzz::asFile(data, size), "fuzz")) (void)c.key();
  } catch (const cuset::Error&) {
  }
  return 0;
}
