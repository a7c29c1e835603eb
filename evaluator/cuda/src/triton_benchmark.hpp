#pragma once
// How Triton's autotuner times one configuration on a GPU (triton.testing.do_bench, called by
// Autotuner._bench with quantiles 0.5, 0.2, 0.8): a run to settle, five runs to estimate, then 25 ms of
// warm-up and 100 ms of timed runs, each after the L2 is cleared by zeroing 256 MB, each timed with its
// own pair of events. The autotuner keeps the configuration with the smallest (median, 20th, 80th
// percentile), compared in that order. Private to the GPU worker.
#include <array>
#include <functional>
#include <vector>

#include "cuda_handles.hpp"

namespace cuset::detail {

struct TritonTiming {
  std::array<double, 3> ms{};  // median, 20th and 80th percentile, in milliseconds
  std::size_t runs = 0;        // timed runs
};

// `cache`: Triton's 256 MB L2-clearing buffer. `enqueue` puts one run of the configuration on `stream`.
// The caller has enqueued do_bench's first, settling run already (the launch that shows whether the driver
// takes the configuration at all).
TritonTiming tritonDoBench(const Cuda& cuda, CUstream stream, const DeviceMemory& cache, const std::function<void()>& enqueue);

// torch.quantile's linear interpolation, as do_bench summarises its times.
double quantileOf(std::vector<double> values, double q);

inline constexpr std::size_t kTritonBenchCacheBytes = 256'000'000;  // int(256e6 // 4) int32s

}  // namespace cuset::detail
