#pragma once
// GPU-side timing of every kernel a measured iteration launches, on any stream, through the CUPTI
// Activity API (CONCURRENT_KERNEL records joined to EXTERNAL_CORRELATION ids pushed around each
// iteration). libcupti is loaded lazily with dlopen, like the driver. The records are reduced by
// summariseActivity (cuset_timing), which is tested without a GPU.
#include <cstdint>
#include <memory>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/timing/kernel_activity.hpp"

namespace cuset {

class CuptiKernelTimer {
 public:
  // Loads libcupti ($CUSET_LIBCUPTI, else libcupti.so.13/.12/.so) and enables kernel activity. One
  // per process. The error says why CUPTI is unusable; callers fall back to CUDA events.
  static Expected<std::unique_ptr<CuptiKernelTimer>> create();
  ~CuptiKernelTimer();
  CuptiKernelTimer(const CuptiKernelTimer&) = delete;
  CuptiKernelTimer& operator=(const CuptiKernelTimer&) = delete;

  // Brackets the launches of one measured iteration; `id` must be unique per iteration.
  void beginIteration(std::uint64_t id);
  void endIteration();

  // Flushes CUPTI's buffers and returns the busy time of each iteration since the last collect().
  ActivitySummary collect(std::size_t launchesPerIteration, const std::vector<std::uint64_t>& iterations);

  struct Api;  // resolved entry points (defined in the .cpp, so only create() can make one)
  explicit CuptiKernelTimer(std::unique_ptr<Api> api);

 private:
  std::unique_ptr<Api> api_;
};

}  // namespace cuset
