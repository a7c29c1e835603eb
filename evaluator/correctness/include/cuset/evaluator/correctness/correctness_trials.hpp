#pragma once
// The correctness layer shared by every backend that runs kernels (DESIGN §4 "Correctness"): fresh
// inputs per trial (odd trials from the alternate distribution), canary-filled outputs, guard bands,
// the reference comparison, input-mutation and determinism checks. A backend supplies only how one
// trial's launches run on a filled device region.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuset/evaluator/region/device_region.hpp"
#include "cuset/evaluator/correctness/reference_cache.hpp"
#include "cuset/evaluator/region/trial_run.hpp"
#include "cuset/evaluator/problem/float32_numerics.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

// KernelBench's own check, run after CuSeT's trials (docs/kernelbench.md "Replacing
// eval_from_generations.py"): its public seed, its number of trials, its tolerance for the precision,
// outputs in fresh (zeroed) memory, no fences, canaries, shared-memory poison, mutation or determinism checks.
struct KernelBenchCheckOptions {
  int trials = 0;  // 0: not run
  Tolerance tolerance{1e-4, 1e-4};
  std::uint64_t seed = 42;  // eval_kernel_against_ref's seed_num
  // The GPU class whose verdict is predicted, and so how PyTorch computes float32 there by default:
  // the reference's convolutions and the plan's library convolutions in TF32 from Ampere on.
  GpuClass gpu = GpuClass::none;
};

struct CorrectnessOptions {
  std::uint64_t seed = 0;  // the run's secret seed
  int trials = 5;          // plus one determinism rerun
  std::string sizeSet = "small";
  KernelBenchCheckOptions kernelbench;
  // Simulator only: a kernel judged correct also runs trial 0 race-checked (an instrumented build),
  // which finds races the simulator's order hides (lost updates in global memory). Wrong outputs are
  // race-checked whatever this says, to name their cause.
  bool raceCheckCorrect = true;
};

struct TrialRequest {
  int trial = 0;  // 0-based; the determinism rerun repeats trial 0
  bool rerun = false;
  bool reverseThreadOrder = false;                    // simulator: start threads in reverse order
  bool kernelbench = false;                           // a KernelBench-check trial: the plain layout, no shared-memory poison
  Float32Numerics numerics = Float32Numerics::exact;  // how the plan's library steps compute (TF32 convolutions)
  // Simulator only: report the first race in shared memory instead of running on through it
  // (cuset_sim::SharedAccesses; KernelBench-check trials decide lockstep themselves, sim_backend.cpp).
  bool raceCheck = false;
};

// Runs `region` (filled by the layout) through the backend; the region comes back as the kernels left it.
using TrialExecutor = std::function<TrialRun(std::vector<std::byte>& region, const TrialRequest& request)>;

// The device region's layout for each trial: one for every trial (a GPU), or two taking turns (the
// simulator's fences after, then before, every buffer). Each layout serves two trials in a row
// (trials 0-1 and the rerun the first, 2-3 the second, 4-5 the first, ...), so a kernel that keys a
// cache by a buffer's address meets the same address with fresh inputs (docs/exploits.md). The
// layouts must outlive the trials.
// KernelBench-check trials use a third layout without fences (`plain`; index 2), as a GPU gives.
struct TrialLayouts {
  TrialLayouts(const RegionLayout& every) : first(&every), second(&every), plain(&every) {}  // NOLINT(google-explicit-constructor)
  TrialLayouts(const RegionLayout& firstPair, const RegionLayout& secondPair, const RegionLayout& unfenced)
      : first(&firstPair), second(&secondPair), plain(&unfenced) {}
  static int index(int trial) { return (trial / 2) % 2; }
  static int index(const TrialRequest& request) { return request.kernelbench ? 2 : index(request.trial); }
  const RegionLayout& at(int index) const { return index == 0 ? *first : index == 1 ? *second : *plain; }
  const RegionLayout& of(int trial) const { return at(index(trial)); }
  const RegionLayout& of(const TrialRequest& request) const { return at(index(request)); }

  const RegionLayout* first;
  const RegionLayout* second;
  const RegionLayout* plain;
};

// Runs options.trials trials plus a determinism rerun of trial 0 and sets result.verdict, reason,
// trials, comparisons and nondeterministic; kernelMs of each trial is appended to timingSamplesMs
// when `recordSamples`. `executorName` words harness failures ("the simulator could not run ...").
// Then, when options.kernelbench.trials > 0, KernelBench's check, into result.kernelbench.
void runCorrectnessTrials(const Problem& problem, const TrialLayouts& layouts, ReferenceCache& references, const CorrectnessOptions& options,
                          const TrialExecutor& execute, const std::string& executorName, bool recordSamples, EvalResult& result);

}  // namespace cuset
