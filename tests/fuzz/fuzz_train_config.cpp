// A training config (`cuset train --config`, and each run `cuset loop` writes): any bytes either
// parse or throw cuset::Error naming the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/trainer/train_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const cuset::TrainConfig c = cuset::TrainConfig::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz/train.yaml", "fuzz");
    for (std::int64_t step : {std::int64_t{0}, c.maxSteps / 2, c.maxSteps}) (void)c.learningRate(step);
  } catch (const cuset::Error&) {
  }
  return 0;
}
