#pragma once
// The typed result of evaluating one candidate, and its results.jsonl form.
#include <cstdint>
#include <optional>
#include <string_view>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "cuset/evaluator/results/output_comparison.hpp"
#include "cuset/evaluator/results/verdict.hpp"

namespace cuset {

struct StageTimings {
  double manifestMs = 0.0;    // read, extract and validate the manifest
  double translateMs = 0.0;   // a KernelBench solution into a launch plan (or the cache lookup)
  double compileMs = 0.0;     // NVRTC (or cache lookup)
  double simCompileMs = 0.0;  // host compiler for the sim backend (or cache lookup)
  double runMs = 0.0;         // trials: inputs, reference, sandboxed runs, checks
  double totalMs = 0.0;       // whole candidate, harness bookkeeping included
};

// What KernelBench's own check (its eval_kernel_against_ref) concludes about the candidate, reproduced
// here beside CuSeT's verdict: its tolerance, its seeded trials, outputs in fresh memory, and none of
// CuSeT's fences, canaries, mutation or determinism checks (docs/kernelbench.md).
struct KernelBenchCheck {
  bool compiled = false;
  std::optional<bool> correct;                       // nullopt: not reproduced here (`issue` says why)
  int trials = 0;                                    // run
  int passed = 0;                                    // of those, within KernelBench's tolerance
  std::vector<double> maxDifference, avgDifference;  // of each failing trial, as KernelBench lists them
  std::string issue;                                 // KernelBench's correctness_issue or runtime_error; why not reproduced
  std::string gpu;                                   // the GPU class predicted ("ampere", "hopper", "none": exact float32)
  // What the same trials conclude against the exact float32 reference: differs from `correct` only where
  // the GPU's default numerics (TF32 convolutions) decide the verdict.
  std::optional<bool> correctAgainstExact;
  // Why `correct` differs from CuSeT's own verdict, when it does (kernelbench_agreement.hpp's reasons:
  // "tf32_reference", "race_hidden_by_lockstep", "initialisation", "cuset_checks", "kernelbench_trials"); empty when they agree.
  std::string disagreement;
};

// One finding of KernelBench's static checker (its kernel_static_checker): `strict` ones make
// KernelBench reject the submission.
struct StaticFinding {
  std::string check;  // "code_bypass", "torch_computation_ops", ...
  std::string message;
  bool strict = false;
};

struct EvalResult {
  std::string problem;
  std::int64_t sample = 0;
  std::string model;
  Verdict verdict = Verdict::invalid_submission;
  std::string reason;      // empty only for successes
  std::string backend;     // "compile-only", "sim", "cuda"
  std::string origin;      // file:line or path the candidate came from
  std::string sourceHash;  // XXH3-128 of the source, hex
  std::string source;
  // "manifest" (a /*@cuset candidate) or "kernelbench" (ModelNew + load_inline); empty when it was not read.
  std::string form;
  // The LibTorch ops its plan runs besides its kernels (aten::convolution, ...): empty for a pure-kernel
  // candidate, which summaries report apart.
  std::vector<std::string> libraryOps;
  std::string compileLog;
  bool compileCacheHit = false;
  StageTimings timings;
  // Correctness (sim and cuda backends)
  int trials = 0;  // trials run, the determinism rerun included
  // The size sets the verdict was reached at ("small"; "small", "large" where a kernel that passed at
  // `small` ran at KernelBench's sizes with the batch cut too, large_sizes.hpp); empty: none ran.
  std::vector<std::string> sizes;
  std::vector<OutputComparison> comparisons;  // of the failing trial, else of the last one
  bool nondeterministic = false;              // the rerun differed bitwise, within tolerance
  // Timing. "cpu_simulator" samples are CPU wall times and never give a speedup; GPU kinds
  // ("cuda_cupti", "cuda_events") carry the reference's samples, timed the same way.
  std::string timingKind;  // empty: not timed
  std::vector<double> timingSamplesMs;
  std::vector<double> referenceTimingSamplesMs;
  // When the reference's samples were measured by an earlier candidate or run (the reference-timing
  // cache) rather than with this candidate: that measurement's time; empty otherwise.
  std::string referenceTimingKeptFrom;
  // KernelBench's cuda_event measurement of the same timed iterations (--kernelbench-timing): CUDA
  // events on the worker's stream around each forward, after the same L2 flush; KernelBench reports
  // their mean. Empty unless asked for and timed on a GPU.
  std::vector<double> kernelbenchTimingSamplesMs, kernelbenchReferenceTimingSamplesMs;
  // Measured time against the problem's speed-of-light bound (bound / median; 1.0 is the bound),
  // as KernelBench-Hard scores kernels; absent without a cost or a GPU timing.
  std::optional<double> peakFraction;
  // Results that a person should look at although the verdict stands ("speedup_above_10x").
  std::vector<std::string> flags;
  std::optional<KernelBenchCheck> kernelbench;  // absent: the KernelBench check was not asked for
  std::vector<StaticFinding> staticFindings;    // KernelBench's static checker, for KernelBench solutions
  std::optional<int> device;                    // cuda backend: the ordinal of the GPU that judged and timed it

  std::string key() const;  // candidateKey(model, problem, sample)
};

// Whether timings of this kind are GPU measurements that may be compared with the reference.
bool isGpuTiming(std::string_view kind);
// reference median / candidate median for a correct candidate timed on a GPU; nullopt otherwise.
std::optional<double> speedupOf(const EvalResult& result);
double medianOf(std::vector<double> samples);       // 0 for no samples
double meanOf(const std::vector<double>& samples);  // 0 for no samples
// KernelBench's speedup from its own measurement (reference mean / candidate mean) for a correct
// candidate with --kernelbench-timing samples; nullopt otherwise.
std::optional<double> kernelbenchSpeedupOf(const EvalResult& result);
// The `timing.kernelbench` object of results.jsonl: KernelBench's runtime_stats for the candidate and
// the reference, its speedup, and its candidate time over CuSeT's.
nlohmann::json kernelbenchTimingJson(const EvalResult& result);

nlohmann::json toJson(const EvalResult& result);
// Throws cuset::Error when a required field is missing or has the wrong type.
EvalResult evalResultFromJson(const nlohmann::json& json);

}  // namespace cuset
