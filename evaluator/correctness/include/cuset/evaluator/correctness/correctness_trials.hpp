#pragma once
// The correctness layer shared by every backend that runs kernels (DESIGN §4 "Correctness"): fresh
// inputs per trial (odd trials from the alternate distribution), canary-filled outputs, guard bands,
// the reference comparison, input-mutation and determinism checks. A backend supplies only how one
// trial's launches run on a filled device region.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuset/evaluator/correctness/device_region.hpp"
#include "cuset/evaluator/correctness/reference_cache.hpp"
#include "cuset/evaluator/correctness/trial_run.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

struct CorrectnessOptions {
  std::uint64_t seed = 0;   // the run's secret seed
  int trials = 5;           // plus one determinism rerun
  std::string sizeSet = "small";
};

struct TrialRequest {
  int trial = 0;                   // 0-based; the determinism rerun repeats trial 0
  bool rerun = false;
  bool reverseThreadOrder = false;  // simulator: start threads in reverse order
};

// Runs `region` (filled by the layout) through the backend; the region comes back as the kernels left it.
using TrialExecutor = std::function<TrialRun(std::vector<std::byte>& region, const TrialRequest& request)>;

// The device region's layout for each trial: one for every trial (a GPU), or one for even trials and
// the determinism rerun and another for odd trials (the simulator's fences after, then before, every
// buffer). The layouts must outlive the trials.
struct TrialLayouts {
  TrialLayouts(const RegionLayout& every) : even(&every), odd(&every) {}  // NOLINT(google-explicit-constructor)
  TrialLayouts(const RegionLayout& evenTrials, const RegionLayout& oddTrials) : even(&evenTrials), odd(&oddTrials) {}
  const RegionLayout& of(int trial) const { return trial % 2 == 0 ? *even : *odd; }

  const RegionLayout* even;
  const RegionLayout* odd;
};

// Runs options.trials trials plus a determinism rerun of trial 0 and sets result.verdict, reason,
// trials, comparisons and nondeterministic; kernelMs of each trial is appended to timingSamplesMs
// when `recordSamples`. `executorName` words harness failures ("the simulator could not run ...").
void runCorrectnessTrials(const Problem& problem, const TrialLayouts& layouts, ReferenceCache& references, const CorrectnessOptions& options,
                          const TrialExecutor& execute, const std::string& executorName, bool recordSamples, EvalResult& result);

}  // namespace cuset
