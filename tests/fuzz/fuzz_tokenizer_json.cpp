// tokenizer.json: any document loads as a tokenizer or throws cuset::Error; a loaded one encodes and
// decodes text without crashing.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/trainer/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    const cuset::BpeTokenizer t = cuset::BpeTokenizer::fromJson(std::move(j), "fuzz/tokenizer.json");
    const cuset::Encoding e = t.encode("__global__ void k(float* y) { y[threadIdx.x] = 1.0f; } // \xc3\xa9 \xf0\x9f\x9a\x80 <|im_end|>");
    (void)t.decode(e.ids);
  } catch (const cuset::Error&) {
  }
  return 0;
}
