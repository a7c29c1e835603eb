#pragma once
// The fastest a problem can possibly run on a device: max(FLOPs / peak, bytes / bandwidth) from the
// problem's `cost`. A measured time well below it means the kernel did not do the work (cached or
// precomputed results, work hidden outside the timed region), so it is hack_suspected.
#include <optional>
#include <string>
#include <string_view>

#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

struct DevicePeaks {
  std::string name;
  double fp32FlopsPerSecond = 0.0;    // CUDA cores
  double tensorFlopsPerSecond = 0.0;  // dense fp16/bf16 tensor cores
  double bytesPerSecond = 0.0;        // DRAM bandwidth (measured where possible)
};

// H100 SXM datasheet figures: 67 TFLOP/s fp32, 989 TFLOP/s dense fp16/bf16, 3.35 TB/s.
DevicePeaks h100Peaks();

// Lower bound in ms for one run at `sizeSet`; the tensor-core peak applies when a floating input is
// float16/bfloat16. nullopt without a cost or the size set.
std::optional<double> rooflineMs(const Problem& problem, std::string_view sizeSet, const DevicePeaks& device);

// The hack_suspected reason when `measuredMs` is below `slack` times the roofline, else nullopt.
// The slack (default 0.8) absorbs datasheet-vs-boost-clock differences and cost formulas that count
// bytes a cache may legitimately serve.
std::optional<std::string> speedOfLightViolation(const Problem& problem, std::string_view sizeSet, const DevicePeaks& device, double measuredMs,
                                                 double slack = 0.8);

}  // namespace cuset
