#pragma once
// The state one `cuset eval` run passes from phase to phase (eval_run.cpp), and the run.json record
// built from it (run_record.cpp). Private to the composition (evaluator/evaluation/).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_frontend.hpp"
#include "cuset/evaluator/manifest/manifest_frontend.hpp"
#include "cuset/evaluator/pipeline/reference_check.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"
#include "cuset/evaluator/results/results_log.hpp"
#include "cuset/evaluator/triton/triton_frontend.hpp"

namespace cuset::detail {

// The candidates this run judges: the shard's part of the file, and the identity of the whole file.
struct CandidateBatch {
  std::vector<Candidate> candidates;
  nlohmann::json identity;              // {fingerprint, candidates}: the whole set, before sharding
  std::set<std::string> shardProblems;  // empty without --shard
};

// The backend that runs, and the devices it runs on. `kind` is never `automatic`.
struct BackendChoice {
  BackendKind kind = BackendKind::compileOnly;
  std::string reason;                 // why, when `auto` chose it
  std::unique_ptr<CudaDevices> cuda;  // cuda backend only
  nlohmann::json device = nullptr;    // the first GPU's description
  nlohmann::json devices = nlohmann::json::array();
  std::string arch;  // the NVRTC target
};

// The run folder, held for the whole evaluation: one evaluation per folder (the lock), its
// crash-safe results and the secret seed its inputs are drawn from.
struct RunFolder {
  RunFolder(const EvalConfig& config, BackendKind backend);
  std::filesystem::path dir;
  FileLock lock;
  std::filesystem::path runJson;
  ResultsLog results;
  std::uint64_t seed = 0;
};

// What judges candidates: the backend and its devices, the compilers, the sandbox's workers, the
// references, the translator with its warm recorder. An EvaluationEngine keeps one between runs whose
// configurations give the same harnessKey(); everything a run may change per run is elsewhere (RunForms).
struct EvalHarness {
  EvalHarness(const EvalConfig& config, BackendChoice backend);
  BackendChoice backend;
  NvrtcCompiler compiler;
  std::unique_ptr<NvrtcCompiler> archSpecificCompiler;  // the GPU's sm_XXa, for Triton's code there (cuda backend only)
  ReferenceCache references;
  std::size_t jobs = 1;
  std::optional<ScratchDir> uncachedLibraries;  // sim with --no-cache: the run's own library folder
  std::unique_ptr<SimCompiler> simCompiler;
  std::unique_ptr<SandboxPool> sandbox;
  KernelBenchTranslator translator;
  std::string sizeSet;
  ReferenceChecker referenceChecker;  // its helper process, kept between runs
  // What the reference check at a run's start found, by problem (its folder, id and reference text) and
  // size set: empty when the reference ran. A reference is not run again for each run of an engine.
  std::map<std::string, std::string> checkedReferences;
};

// The fields of a configuration an EvalHarness is built from: two runs with the same key can share one.
std::string harnessKey(const EvalConfig& config);

// The candidate forms one run reads, Triton's and KernelBench's before the manifest form (which takes
// the rest), and KernelBench's check as the second opinion: per run, as their options are.
struct RunForms {
  RunForms(const EvalConfig& config, const EvalHarness& harness)
      : triton(&harness.translator, config.kernelbench),
        kernelbench(&harness.translator, config.kernelbench),
        kernelbenchCheck(config.kernelbench, harness.backend.arch) {}
  TritonFrontend triton;
  KernelBenchFrontend kernelbench;
  ManifestFrontend manifest;
  KernelBenchCheckSource kernelbenchCheck;
};

// run.json while the run is going: what makes the run comparable (a resume may change none of it) and
// everything a report needs about where and how it ran. Refuses a resume that would mix two evaluations.
nlohmann::json startRunRecord(const EvalConfig& config, const ProblemSuite& suite, const CandidateBatch& batch, const BackendChoice& backend,
                              const RunFolder& run, const EvalHarness& harness, const std::map<std::string, std::string>& unjudgeable);
// run.json once every candidate has a verdict.
void finishRunRecord(nlohmann::json& record, const std::filesystem::path& runJson, const EvalRunSummary& summary, std::size_t candidates,
                     const BackendChoice& backend);
// run.json when a harness failure (a full disk) stops the run: its record says why, not "running" forever.
void failRunRecord(nlohmann::json& record, const std::filesystem::path& runJson, const std::string& error);

}  // namespace cuset::detail
