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

// The device region's layout for each trial: one for every trial (a GPU), or two taking turns (the
// simulator's fences after, then before, every buffer). Each layout serves two trials in a row
// (trials 0-1 and the rerun the first, 2-3 the second, 4-5 the first, ...), so a kernel that keys a
// cache by a buffer's address meets the same address with fresh inputs (docs/exploits.md). The
// layouts must outlive the trials.
struct TrialLayouts {
  TrialLayouts(const RegionLayout& every) : first(&every), second(&every) {}  // NOLINT(google-explicit-constructor)
  TrialLayouts(const RegionLayout& firstPair, const RegionLayout& secondPair) : first(&firstPair), second(&secondPair) {}
  static int index(int trial) { return (trial / 2) % 2; }
  const RegionLayout& at(int index) const { return index == 0 ? *first : *second; }
  const RegionLayout& of(int trial) const { return at(index(trial)); }

  const RegionLayout* first;
  const RegionLayout* second;
};

// Runs options.trials trials plus a determinism rerun of trial 0 and sets result.verdict, reason,
// trials, comparisons and nondeterministic; kernelMs of each trial is appended to timingSamplesMs
// when `recordSamples`. `executorName` words harness failures ("the simulator could not run ...").
void runCorrectnessTrials(const Problem& problem, const TrialLayouts& layouts, ReferenceCache& references, const CorrectnessOptions& options,
                          const TrialExecutor& execute, const std::string& executorName, bool recordSamples, EvalResult& result);

}  // namespace cuset
