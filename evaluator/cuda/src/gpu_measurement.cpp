#include "gpu_measurement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace cuset::detail {

GpuMeasurement::GpuMeasurement(MeasurementTools tools, CUstream stream, const nlohmann::json& options)
    : tools_(tools), stream_(stream), begin_(tools.cuda), end_(tools.cuda), samples_(ruleFrom(options)) {
  const std::size_t flushBytes = options.value("l2_flush_bytes", std::size_t{0});
  if (flushBytes > 0) flush_.emplace(tools_.cuda, flushBytes);
  useCupti_ = tools_.cupti != nullptr;
  start_ = std::chrono::steady_clock::now();
}

bool GpuMeasurement::step(const std::function<void()>& enqueue, const SampleHooks& hooks) {
  const CudaDriver& d = tools_.cuda.driver();
  if (warmups_ < 3) {  // module load, caches, clocks
    ++warmups_;
    enqueue();
    tools_.cuda(d.cuCtxSynchronize(), "warm-up");
    return true;
  }
  const std::uint64_t id = ++tools_.iterationIds;
  if (hooks.before) hooks.before();  // before the flush: what it writes is evicted with the rest
  if (flush_) tools_.cuda(d.cuMemsetD8(flush_->get(), static_cast<unsigned char>(id), flush_->bytes()), "flushing L2");
  // Lines a kernel marked persisting would otherwise survive the flush.
  tools_.cuda(d.cuCtxResetPersistingL2Cache(), "resetting persisting L2 lines");
  tools_.cuda(d.cuCtxSynchronize(), "flushing L2");
  if (useCupti_) tools_.cupti->beginIteration(id);
  const auto hostStart = std::chrono::steady_clock::now();
  tools_.cuda(d.cuEventRecord(begin_.get(), stream_), "cuEventRecord");
  enqueue();
  tools_.cuda(d.cuEventRecord(end_.get(), stream_), "cuEventRecord");
  tools_.cuda(d.cuCtxSynchronize(), "running the timed work");
  hostMs_.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hostStart).count());
  if (tools_.clocks) {
    if (auto r = tools_.clocks->throttleReasons()) throttle_ |= *r & kSignificantThrottleReasons;
    if (auto mhz = tools_.clocks->smClockMhz()) {
      minClock_ = std::min(minClock_, *mhz);
      maxClock_ = std::max(maxClock_, *mhz);
    }
  }
  if (useCupti_) tools_.cupti->endIteration();
  float ms = 0.0f;
  tools_.cuda(d.cuEventElapsedTime(&ms, begin_.get(), end_.get()), "cuEventElapsedTime");
  eventMs_.push_back(ms);
  ids_.push_back(id);
  samples_.add(ms);  // the stopping rule watches event times; CUPTI busy times replace them below
  if (hooks.after) hooks.after(eventMs_.size() - 1);
  stop_ = samples_.shouldStop(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  return !stop_;
}

nlohmann::json GpuMeasurement::finish(std::size_t launchesPerIteration) {
  std::string kind = "cuda_events";
  std::vector<std::string> problems;
  if (tools_.cuptiError) problems.push_back(*tools_.cuptiError);
  std::vector<double> gpuMs = eventMs_;
  if (useCupti_) {
    const ActivitySummary activity = tools_.cupti->collect(launchesPerIteration, ids_);
    problems.insert(problems.end(), activity.problems.begin(), activity.problems.end());
    if (activity.iterations.size() == ids_.size()) {
      kind = "cuda_cupti";
      gpuMs.clear();
      for (const auto& it : activity.iterations) gpuMs.push_back(it.busyMs);
    } else {
      problems.push_back("CUPTI records incomplete: event timings used instead");
    }
  }
  const SampleStats gpu = computeStats(gpuMs), host = computeStats(hostMs_);
  if (host.median > 4 * gpu.median + 0.05) {
    problems.push_back(
        fmt::format("host wall time per iteration ({:.4g} ms) far exceeds GPU kernel time ({:.4g} ms): work outside the "
                    "timed kernels?",
                    host.median, gpu.median));
  }
  nlohmann::json clocks = nullptr;
  if (tools_.clocks) {
    clocks = {{"throttle_reasons", describeThrottleReasons(throttle_)}};
    if (maxClock_ > 0) clocks["sm_clock_mhz"] = {minClock_, maxClock_};
    if (throttle_) problems.push_back("the GPU throttled its clocks during the measurement (" + describeThrottleReasons(throttle_) + ")");
  }
  return {{"kind", kind},
          {"clocks", clocks},
          {"throttled", throttle_ != 0},
          {"samples_ms", gpuMs},
          // The same iterations as KernelBench's cuda_event method times them: events recorded on the
          // worker's stream around the work, so a kernel on another stream is not in them (CUPTI's are).
          {"event_samples_ms", eventMs_},
          {"stop", stop_ ? std::string(stopReasonName(*stop_)) : "incomplete"},
          {"median_ms", gpu.median},
          {"rel_stddev", gpu.relStddev()},
          {"host_median_ms", host.median},
          {"problems", problems}};
}

StoppingRule GpuMeasurement::ruleFrom(const nlohmann::json& options) {
  StoppingRule rule;
  rule.minSamples = options.value("min_samples", rule.minSamples);
  rule.maxRelStddev = options.value("max_rel_stddev", rule.maxRelStddev);
  rule.minTotalSeconds = options.value("min_seconds", rule.minTotalSeconds);
  rule.maxWallSeconds = options.value("max_seconds", rule.maxWallSeconds);
  return rule;
}

}  // namespace cuset::detail
