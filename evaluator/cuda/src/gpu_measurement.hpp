#pragma once
// nvbench-style measurement of one piece of GPU work (the candidate's launches, or the reference's
// forward): every sample starts with a cold L2 (a write larger than it), the work is timed on the
// GPU (CUPTI busy time of all its kernels, else events on its stream), and sampling stops when the
// noise is low enough or at the time cap. The host clock cross-checks work hidden outside the timed
// kernels. Private to the GPU worker.
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuda_handles.hpp"
#include "cuset/evaluator/cuda/cupti_kernel_timer.hpp"
#include "cuset/evaluator/cuda/nvml_clock_monitor.hpp"
#include "cuset/evaluator/timing/sample_stats.hpp"

namespace cuset::detail {

// What a measurement uses, owned by the worker's GPU session and outliving the measurement.
struct MeasurementTools {
  const Cuda& cuda;
  CuptiKernelTimer* cupti = nullptr;             // null: CUDA events only
  const std::optional<std::string>& cuptiError;  // why CUPTI is unavailable, reported with each timing
  NvmlClockMonitor* clocks = nullptr;            // null: throttling is not detected
  std::uint64_t& iterationIds;                   // unique across measurements: CUPTI's external correlation ids
};

class GpuMeasurement {
 public:
  // `options`: the supervisor's timing object (stopping rule, l2_flush_bytes).
  GpuMeasurement(MeasurementTools tools, CUstream stream, const nlohmann::json& options);
  GpuMeasurement(const GpuMeasurement&) = delete;
  GpuMeasurement& operator=(const GpuMeasurement&) = delete;

  // Work around each timed sample, outside its timed window (warm-up runs get neither).
  struct SampleHooks {
    std::function<void()> before;                  // e.g. poison the outputs, so a sample that skips its work shows
    std::function<void(std::size_t index)> after;  // e.g. keep one sample's outputs for checking
  };
  // One sample of `enqueue` (which only enqueues work on the stream); false once the rule says stop.
  bool step(const std::function<void()>& enqueue, const SampleHooks& hooks = {});
  std::size_t samples() const { return eventMs_.size(); }
  // The timing object of the reply. `launchesPerIteration` 0: unknown (the reference), so record
  // counts are not checked.
  nlohmann::json finish(std::size_t launchesPerIteration);

 private:
  static StoppingRule ruleFrom(const nlohmann::json& options);

  MeasurementTools tools_;
  CUstream stream_;
  Event begin_, end_;
  SampleCollector samples_;
  std::optional<DeviceMemory> flush_;
  bool useCupti_ = false;
  int warmups_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::vector<double> eventMs_, hostMs_;
  std::vector<std::uint64_t> ids_;
  std::optional<StopReason> stop_;
  std::uint64_t throttle_ = 0;
  unsigned minClock_ = ~0u, maxClock_ = 0;
};

}  // namespace cuset::detail
