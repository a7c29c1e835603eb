#include "cuset/evaluator/timing/speed_of_light.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace cuset {
namespace {

std::optional<double> asDouble(std::optional<std::int64_t> v) { return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt; }

bool usesHalfPrecision(const Problem& p) {
  return std::any_of(p.inputs.begin(), p.inputs.end(), [](const TensorSpec& t) { return t.dtype == DType::float16 || t.dtype == DType::bfloat16; });
}

}  // namespace

DevicePeaks h100Peaks() { return {"H100 SXM (datasheet)", 67e12, 989e12, 3.35e12}; }

std::optional<double> rooflineMs(const Problem& problem, std::string_view sizeSet, const DevicePeaks& device) {
  const auto flops = asDouble(problem.flopsAt(sizeSet));
  const auto bytes = asDouble(problem.bytesAt(sizeSet));
  if (!flops && !bytes) return std::nullopt;
  const double peak = usesHalfPrecision(problem) ? device.tensorFlopsPerSecond : device.fp32FlopsPerSecond;
  const double computeS = flops && peak > 0 ? *flops / peak : 0.0;
  const double memoryS = bytes && device.bytesPerSecond > 0 ? *bytes / device.bytesPerSecond : 0.0;
  return std::max(computeS, memoryS) * 1e3;
}

std::optional<std::string> speedOfLightViolation(const Problem& problem, std::string_view sizeSet, const DevicePeaks& device, double measuredMs,
                                                 double slack) {
  const auto bound = rooflineMs(problem, sizeSet, device);
  if (!bound || !(*bound > 0) || measuredMs >= slack * *bound) return std::nullopt;
  return fmt::format(
      "measured {:.4g} ms is below the speed of light of {} for this problem ({:.4g} ms from its cost at sizes '{}'): "
      "the kernel cannot have done the work it was timed for",
      measuredMs, device.name, *bound, sizeSet);
}

}  // namespace cuset
