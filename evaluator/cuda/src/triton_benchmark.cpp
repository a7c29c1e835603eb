#include "triton_benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace cuset::detail {

double quantileOf(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

TritonTiming tritonDoBench(const Cuda& cuda, CUstream stream, const DeviceMemory& cache, const std::function<void()>& enqueue) {
  const CudaDriver& d = cuda.driver();
  const auto clearCache = [&] { cuda(d.cuMemsetD8Async(cache.get(), 0, cache.bytes(), stream), "clearing L2 between autotuning runs"); };
  cuda(d.cuStreamSynchronize(stream), "an autotuned configuration");  // the settling run, the caller's

  // The estimate includes the clearing, as Triton's does.
  Event begin(cuda), end(cuda);
  cuda(d.cuEventRecord(begin.get(), stream), "cuEventRecord");
  for (int i = 0; i < 5; ++i) {
    clearCache();
    enqueue();
  }
  cuda(d.cuEventRecord(end.get(), stream), "cuEventRecord");
  cuda(d.cuEventSynchronize(end.get()), "an autotuned configuration");
  float total = 0.0f;
  cuda(d.cuEventElapsedTime(&total, begin.get(), end.get()), "cuEventElapsedTime");
  // A real GPU's estimate is at least the clearing's time (~0.1 ms on an H100); the floor and the cap keep
  // a driver reporting nothing (the test's fake) from asking for millions of runs.
  const double estimateMs = std::max(static_cast<double>(total) / 5.0, 0.01);
  const auto runsFor = [&](double ms) { return std::clamp<std::size_t>(static_cast<std::size_t>(ms / estimateMs), 1, 10'000); };
  const std::size_t warmups = runsFor(25.0), repeats = runsFor(100.0);

  for (std::size_t i = 0; i < warmups; ++i) enqueue();
  std::vector<std::unique_ptr<Event>> starts, ends;
  for (std::size_t i = 0; i < repeats; ++i) {
    starts.push_back(std::make_unique<Event>(cuda));
    ends.push_back(std::make_unique<Event>(cuda));
  }
  for (std::size_t i = 0; i < repeats; ++i) {
    clearCache();
    cuda(d.cuEventRecord(starts[i]->get(), stream), "cuEventRecord");
    enqueue();
    cuda(d.cuEventRecord(ends[i]->get(), stream), "cuEventRecord");
  }
  cuda(d.cuStreamSynchronize(stream), "an autotuned configuration's timed runs");
  std::vector<double> times;
  for (std::size_t i = 0; i < repeats; ++i) {
    float ms = 0.0f;
    cuda(d.cuEventElapsedTime(&ms, starts[i]->get(), ends[i]->get()), "cuEventElapsedTime");
    times.push_back(ms);
  }
  return {{quantileOf(times, 0.5), quantileOf(times, 0.2), quantileOf(times, 0.8)}, repeats};
}

}  // namespace cuset::detail
