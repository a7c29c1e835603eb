#pragma once
// `cuset eval`: candidates -> manifest -> NVRTC -> (backend) -> results.jsonl, in parallel, resumable.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/cuda/cuda_backend.hpp"
#include "cuset/evaluator/pipeline/remote_judge.hpp"
#include "cuset/evaluator/pipeline/shard_plan.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/results/eval_result.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"
#include "cuset/evaluator/sim_backend/sim_backend.hpp"
#include "cuset/evaluator/problem/float32_numerics.hpp"
#include "cuset/evaluator/translate/kernelbench_translator.hpp"

namespace cuset {

// `automatic` ("auto") is resolved when a run starts: cuda when a GPU and driver are usable, else sim.
enum class BackendKind { compileOnly, sim, cuda, automatic };
std::string_view backendName(BackendKind kind);
std::optional<BackendKind> parseBackend(std::string_view name);
// The NVRTC target for a device of compute capability "9.0": its own sm_XY cubin when NVRTC knows
// it, else PTX (compute_XY) of the newest architecture NVRTC supports, for the driver to JIT.
std::string archForDevice(const std::string& computeCapability);

// KernelBench as a drop-in (docs/kernelbench.md "Replacing eval_from_generations.py").
struct KernelBenchRunOptions {
  // auto: KernelBench's own check beside CuSeT's for KernelBench solutions and imported KernelBench
  // problems; always; never.
  std::string check = "auto";
  int checkTrials = 5;  // eval_from_generations.py's num_correct_trials
  // KernelBench's precision option: fp32 runs problems as they are; fp16 / bf16 cast every float32
  // input, weight and output (and set KernelBench's tolerance for it, 1e-2).
  std::string precision = "fp32";
  // The GPU class whose KernelBench verdict is predicted (--kernelbench-gpu: none, ampere, ada, hopper,
  // ...): it decides PyTorch's default numerics there (TF32 convolutions from Ampere on). "auto": the
  // class of the run's target architecture (sm_90: hopper).
  std::string gpu = "auto";
  // KernelBench's float32 tolerance (atol = rtol; half types keep 1e-2): 1e-4 in today's KernelBench,
  // 1e-2 in v0 and v0.1 (--kernelbench-tolerance, or read from --kernelbench's eval.py).
  double float32Tolerance = 1e-4;
  std::string staticChecks = "record";  // record: findings only; strict: its strict findings are invalid_submission
  std::filesystem::path baseline;       // KernelBench's baseline timing JSON: fast_p and the geometric-mean speedup
  std::vector<int> passAtK{1};          // pass_at_k_results.json's k values
};

// The GPU class of `options.gpu` for a run whose NVRTC target is `arch`; throws cuset::Error naming the
// option for an unknown class.
GpuClass kernelBenchGpu(const KernelBenchRunOptions& options, const std::string& arch);
// Why KernelBench's reproduced check and CuSeT's verdict differ on `result`, or "" where they agree or
// KernelBench's was not reproduced (docs/kernelbench.md "Why the two verdicts differ").
std::string kernelBenchDisagreement(const EvalResult& result);

struct EvalConfig {
  std::filesystem::path problemsDir = "problems";
  std::filesystem::path candidatesPath;
  std::filesystem::path outDir;  // empty: runs/<timestamp>-<backend>
  BackendKind backend = BackendKind::automatic;
  std::string arch;                                    // empty: the GPU's own on the cuda backend, else sm_90
  std::chrono::milliseconds compileTimeout{60000};     // per NVRTC compile, in a helper process
  std::chrono::milliseconds referenceTimeout{120000};  // per problem, for the reference check at the start
  std::chrono::milliseconds translateTimeout{120000};  // per run of the KernelBench translator's helper
  std::size_t jobs = 0;                                // 0: one per core
  bool resume = false;
  std::optional<std::uint64_t> seed;  // per-run secret seed for inputs; random when absent
  std::filesystem::path cacheDir;     // empty: defaultCacheDir()/nvrtc
  bool useCache = true;
  std::string defaultModel;  // for candidates that name none; empty: the candidates file's stem
  std::vector<std::string> commandLine;
  bool showProgress = true;
  std::optional<Shard> shard;     // judge only this shard's problems (needs a seed; docs/scale-out.md)
  int trials = 5;                 // correctness trials (plus one determinism rerun)
  std::string sizeSet;            // empty: "small" on sim, "full" on cuda
  bool includeDefective = false;  // reports count problems flagged defective (`defect:`) in the metrics
  // sim backend
  SandboxLimits sandbox;  // per-job time limit, memory, host threads, stack size
  // KernelBench problems get a `large` set (their own sizes with the batch cut, large_sizes.hpp) whose
  // inputs and outputs fit this many MiB; a kernel that passes at `small` runs one trial there. 0: none.
  std::int64_t largeSizesMib = 256;
  // Which kernels run one more trial race-checked (shared memory and the trial's buffers): "all" (those
  // judged correct too: their races the simulator's order hides, lost updates above all) or "failures"
  // (only wrong outputs, to name their cause; one host build fewer per correct kernel).
  std::string raceCheck = "all";
  // The host build's variants, for measuring only (bench_sim runs the suite with each): false parses
  // the prelude in every build; code generation other than the default.
  bool precompiledPrelude = true;
  SimCodegen simCodegen;
  // cuda backend
  CudaOptions cuda;
  std::vector<int> devices;  // GPU ordinals, one worker each; empty: every visible GPU
  KernelBenchRunOptions kernelbench;
  // Set: candidates are judged by a running `cuset serve` (remote_judge.hpp), nothing runs here.
  std::shared_ptr<const RemoteJudge> remote;
};

struct EvalRunSummary {
  std::filesystem::path runDir;
  BackendKind backend = BackendKind::compileOnly;  // the one that ran (never automatic)
  std::string backendReason;                       // why, when it was chosen automatically
  std::vector<EvalResult> results;                 // every result of the run, resumed ones included, in candidate order
  std::size_t evaluatedNow = 0;
  std::size_t skippedAsDone = 0;
  std::map<Verdict, std::size_t> counts;
  double seconds = 0.0;
  std::vector<std::filesystem::path> kernelbenchFiles;  // KernelBench's result files written (kernelbench_files.hpp)
};

// What evaluating a candidate needs besides the candidate. The sim members are null for compile-only.
struct EvalServices {
  const ProblemSuite& suite;
  const NvrtcCompiler& nvrtc;
  BackendKind backend = BackendKind::compileOnly;
  const SimCompiler* simCompiler = nullptr;
  SandboxPool* sandbox = nullptr;
  ReferenceCache* references = nullptr;
  CorrectnessOptions correctness;
  CudaDevices* cuda = nullptr;  // cuda backend only
  // Problems this run cannot judge, with the reason their candidates' `unsupported` verdict gives: the
  // reference failed the check at the start, or the problem has no size set the backend runs.
  const std::map<std::string, std::string>* unjudgeable = nullptr;
  // KernelBench solutions into launch plans; null: such candidates are `unsupported`.
  const KernelBenchTranslator* translator = nullptr;
  const KernelBenchRunOptions* kernelbench = nullptr;  // null: defaults
  const RemoteJudge* remote = nullptr;                 // set: every candidate goes to it
  std::string arch;                                    // the NVRTC target ("sm_90"): the GPU class KernelBench's check predicts by default
};

// The per-candidate stages. Never throws for a bad candidate: every problem with the candidate becomes
// its verdict and reason.
EvalResult evaluateCandidate(const Candidate& candidate, const EvalServices& services);

// Runs a whole evaluation and writes RUN_DIR/run.json and RUN_DIR/results.jsonl.
EvalRunSummary runEvaluation(const EvalConfig& config);

}  // namespace cuset
