// safetensors files (the header above all: lengths, offsets, shapes, dtypes) as checkpoints load them.
#include <cstddef>
#include <cstdint>

#include "cuset/common/error.hpp"
#include "cuset/trainer/safetensors.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto file = cuset::safetensors::File::open(cuset::fuzz::asFile(data, size));
    std::size_t bytes = 0;
    for (const auto& t : file.tensors()) bytes += t.data.size();
    (void)bytes;
  } catch (const cuset::Error&) {
  }
  return 0;
}
