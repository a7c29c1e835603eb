#pragma once
// The `cuda` backend's supervisor side: it never touches the GPU itself. One `cuset __cuda-worker`
// process owns the device; each trial's filled region goes to it and comes back as the kernels left
// it, and the shared correctness layer judges it exactly as for the simulator. A correct candidate
// is then timed by the worker (CUPTI, else CUDA events) with the stopping rule of cuset_timing.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/correctness/correctness_trials.hpp"
#include "cuset/evaluator/correctness/reference_cache.hpp"
#include "cuset/evaluator/region/trial_run.hpp"
#include "cuset/evaluator/cuda/reference_timing_cache.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

struct CudaOptions {
  std::string timer = "cupti";  // or "events"
  bool time = true;             // time correct candidates
  std::size_t minSamples = 10;
  double maxRelStddev = 0.005;
  double minSeconds = 0.5;
  double maxSeconds = 15.0;
  std::chrono::milliseconds trialTimeout{60000};
  std::optional<int> device;  // the worker's GPU among the visible ones (default: the first)
  // Also report KernelBench's own cuda_event measurement of the same timed iterations (candidate and
  // reference), beside CuSeT's (EvalResult::kernelbenchTiming).
  bool kernelbenchTiming = false;
  // Where the reference's timings are kept between runs (reference_timing_cache.hpp); empty: this
  // process only. `retimeReference`: measure it again for every candidate, replacing what is kept.
  std::filesystem::path referenceTimingDir;
  bool retimeReference = false;
};

class WorkerProcess;

// The GPU worker, shared by evaluation threads (one job at a time: one GPU).
class CudaWorkerPool {
 public:
  explicit CudaWorkerPool(CudaOptions options);
  ~CudaWorkerPool();
  CudaWorkerPool(const CudaWorkerPool&) = delete;
  CudaWorkerPool& operator=(const CudaWorkerPool&) = delete;

  // Starts the worker and returns the device description; throws cuset::Error with the worker's one
  // line (no libcuda.so.1, the stub, an old driver, no device) when the GPU cannot be used.
  nlohmann::json probe();

  struct Job {
    const CompileOutput* compiled = nullptr;
    const LaunchPlan* plan = nullptr;  // its kernel and library steps run in the worker, in order
    const RegionLayout* layout = nullptr;
    std::vector<std::byte> region;  // in and out; with `time`: timing region, fresh region, snapshot room
    bool time = false;
    nlohmann::json reference;  // with `time`: {problem_file, size_set, inputs} to time the reference too
    nlohmann::json checks;     // with `time`: {region_bytes, outputs, check_sample, fresh_region}
    // Triton's autotuning instead of a trial: the plan's autotuned launches are timed on the region and
    // `autotuned` receives the worker's choices ([{key, chosen, ms}]); the region does not come back.
    bool autotune = false;
    nlohmann::json autotuned;
  };
  // `timing` receives the worker's timing object when job.time.
  TrialRun run(Job& job, nlohmann::json* timing);

  const CudaOptions& options() const { return options_; }
  const nlohmann::json& device() const { return device_; }
  // What the worker's measurements follow: the timer, the stopping rule and the L2 flush's size.
  static nlohmann::json timingRule(const CudaOptions& options, const nlohmann::json& device);
  ReferenceTimingCache& referenceTimings() { return referenceTimings_; }
  int deviceCount() const { return deviceCount_; }  // visible to this worker, from probe()

 private:
  CudaOptions options_;
  std::unique_ptr<WorkerProcess> process_;
  std::mutex mutex_;
  nlohmann::json device_;
  int deviceCount_ = 0;
  ReferenceTimingCache referenceTimings_;
};

// One worker per GPU of the node (`cuset eval --devices`). A candidate is judged and timed entirely
// on the device it was given, so no timing is ever shared between devices.
class CudaDevices {
 public:
  // `devices`: ordinals among the visible devices; empty: every visible device.
  CudaDevices(const CudaOptions& options, std::vector<int> devices);
  // Starts every worker; throws cuset::Error with the worker's line when a GPU cannot be used.
  // Returns [{ordinal, device description}, ...].
  nlohmann::json probe();

  class Lease {
   public:
    Lease(CudaDevices& owner, std::size_t slot) : owner_(&owner), slot_(slot) {}
    Lease(Lease&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), slot_(other.slot_) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    CudaWorkerPool& pool() const;
    int ordinal() const;

   private:
    CudaDevices* owner_;
    std::size_t slot_;
  };
  // Waits for a free device.
  Lease acquire();
  std::size_t size() const { return pools_.size(); }
  const nlohmann::json& firstDevice() const { return pools_.front()->device(); }

 private:
  std::vector<int> ordinals_;
  std::vector<std::unique_ptr<CudaWorkerPool>> pools_;
  std::vector<bool> busy_;
  std::mutex mutex_;
  std::condition_variable freed_;
};

// The key under which the reference of `problem` at `sizeSet` is timed on `device` (a worker's
// description) with `options`' rule and this build's LibTorch.
ReferenceTimingKey referenceTimingKey(ReferenceTimingCache& cache, const Problem& problem, const std::string& sizeSet, const CudaOptions& options,
                                      const nlohmann::json& device);

// Runs `plan` (the launch plan for options.sizeSet): sets the verdict (as the sim backend does), then
// GPU timing for correct candidates, flagging a time below the problem's speed of light as
// hack_suspected. A plan with library steps is timed only where LibTorch has CUDA (the steps run on
// the GPU, between the kernels, and are timed with them); elsewhere they run on the host and the
// candidate is judged but not timed. A plan with Triton's autotuned launches is first autotuned on the
// GPU (the choices end the result's compile log) and judged and timed with the chosen configurations.
void runCudaBackend(const Problem& problem, const LaunchPlan& plan, const CompileOutput& compiled, CudaWorkerPool& pool, ReferenceCache& references,
                    const CorrectnessOptions& options, EvalResult& result);

}  // namespace cuset
