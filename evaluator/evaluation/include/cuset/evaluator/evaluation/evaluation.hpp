#pragma once
// `cuset eval` as a whole: the run's configuration, the composition of the pipeline (its backends, the
// candidate forms it reads, the second opinion it reproduces) and the run around it (threads, resume,
// run.json, the forms' own result files). The one place that names every frontend (candidate_frontend.hpp);
// what the rest of the project calls (runEvaluation) and links (cuset_evaluator).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/kernelbench/kernelbench_options.hpp"
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"

namespace cuset {

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
  bool warmHarness = false;                             // an EvaluationEngine's earlier run had started what judged it
};

namespace detail {
struct EvalHarness;
}

// Runs evaluations one after another, keeping what judges them between runs (`cuset engine`,
// docs/serve.md "Warm engines"): the backend and its devices, the sandbox's worker processes, the NVRTC
// and host-build caches, the translator's warm recorder, the compiled references and which references
// ran. Each run's candidates are still judged as `cuset eval` judges them: every trial in a sandboxed
// child of its own. A run whose configuration changes what the harness is built from (harnessKey: the
// backend, jobs, limits, caches) replaces it; one that only changes the candidates, problems, run
// folder, trials, seed or KernelBench options keeps it. Not thread-safe: one run at a time.
class EvaluationEngine {
 public:
  EvaluationEngine();
  ~EvaluationEngine();
  EvaluationEngine(const EvaluationEngine&) = delete;
  EvaluationEngine& operator=(const EvaluationEngine&) = delete;
  // Writes RUN_DIR/run.json and RUN_DIR/results.jsonl, as runEvaluation does.
  EvalRunSummary run(const EvalConfig& config);

 private:
  detail::EvalHarness& harnessFor(const EvalConfig& config, bool& warm);
  std::string key_;
  std::unique_ptr<detail::EvalHarness> harness_;
};

// Runs a whole evaluation and writes RUN_DIR/run.json and RUN_DIR/results.jsonl.
EvalRunSummary runEvaluation(const EvalConfig& config);

}  // namespace cuset
