// run.json: what a run is (its definition, which a resume may not change), where and how it ran, and
// how it ended.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/pipeline/run_environment.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "eval_run_state.hpp"

namespace fs = std::filesystem;

namespace cuset::detail {
namespace {

// Every problem's problem.yaml and reference archives, in id order: a resume must judge against the
// suite the run began with (a re-import may change an archive and nothing else).
std::string suiteHash(const ProblemSuite& suite) {
  std::vector<const Problem*> problems;
  for (const auto& p : suite.problems()) problems.push_back(&p);
  std::sort(problems.begin(), problems.end(), [](const Problem* a, const Problem* b) { return a->id < b->id; });
  ContentHasher h;
  h.add("cuset-suite-v1");
  for (const Problem* p : problems) {
    h.add(p->id);
    std::error_code ec;
    if (fs::exists(p->directory / "problem.yaml", ec)) h.add(readFile(p->directory / "problem.yaml"));
    std::set<fs::path> archives;
    if (p->referenceArchive) {
      for (const auto& [set, file] : p->referenceArchive->archives) archives.insert(file);
    }
    if (p->inputTransform) {
      for (const auto& [set, file] : p->inputTransform->archives) archives.insert(file);
    }
    for (const auto& file : archives) {
      if (fs::exists(p->directory / file, ec)) h.add(readFile(p->directory / file));
    }
  }
  return h.digest().hex();
}

// "remote" when a server judged (`cuset eval --server`): its results say which backend it ran.
std::string recordedBackend(const EvalConfig& config, const BackendChoice& backend) {
  return config.remote ? "remote" : std::string(backendName(backend.kind));
}

// What makes two runs comparable: a resume may not change any of it (a resumed run with other trials,
// another backend or an edited suite would mix two evaluations under one report).
nlohmann::json runDefinition(const EvalConfig& config, const ProblemSuite& suite, const BackendChoice& backend, const std::string& sizeSet) {
  nlohmann::json definition = {{"backend", recordedBackend(config, backend)},
                               {"arch", backend.arch},
                               {"trials", config.trials},
                               {"size_set", sizeSet},
                               {"compile_timeout_ms", config.compileTimeout.count()},
                               {"problems_hash", suiteHash(suite)}};
  if (backend.kind == BackendKind::sim) definition["trial_timeout_ms"] = config.sandbox.timeout.count();
  if (backend.kind == BackendKind::cuda) definition["cuda"] = {{"timer", config.cuda.timer}, {"timing", config.cuda.time}};
  if (config.shard) definition["shard"] = fmt::format("{}/{}", config.shard->index, config.shard->count);
  definition["kernelbench"] = {{"precision", config.kernelbench.precision},
                               {"check", config.kernelbench.check},
                               {"check_trials", config.kernelbench.checkTrials},
                               {"static", config.kernelbench.staticChecks}};
  return definition;
}

void requireSameDefinition(const fs::path& runJson, const nlohmann::json& definition) {
  const nlohmann::json before = readJsonFile(runJson).value("definition", nlohmann::json::object());
  std::vector<std::string> changed;
  for (const auto& [key, value] : definition.items()) {
    if (before.contains(key) && before[key] != value) changed.push_back(fmt::format("{} {} -> {}", key, dumpJson(before[key]), dumpJson(value)));
  }
  if (!changed.empty()) {
    throw makeError("{}: --resume would mix two evaluations ({}); resume with the run's own settings, or choose another --out", runJson.string(),
                    fmt::format("{}", fmt::join(changed, ", ")));
  }
}

// A candidate already judged must be the same code now.
void requireSameSources(const fs::path& runJson, const ResultsLog& results, const std::vector<Candidate>& candidates) {
  std::map<std::string, std::string> judged;
  for (const auto& r : results.previousResults()) judged[r.key()] = r.sourceHash;
  for (const auto& c : candidates) {
    const auto it = judged.find(c.key());
    if (it != judged.end() && !it->second.empty() && c.readError.empty() && it->second != hashString(c.source).hex()) {
      throw makeError(
          "{}: {} sample {} of model '{}' ({}) was judged with another source; --resume would mix two versions of it "
          "(choose another --out)",
          runJson.string(), c.problemId, c.sample, c.model, c.origin);
    }
  }
}

nlohmann::json cudaRecord(const EvalConfig& config, const BackendChoice& backend, const EvalHarness& harness) {
  return {{"trials", config.trials},
          {"size_set", harness.sizeSet},
          {"device", backend.device},
          {"devices", backend.devices},
          {"timer", config.cuda.timer},
          {"references_on", harness.references.onGpu() ? "cuda" : "cpu"},
          {"reference_timing", TorchReference::cudaAvailable() ? "LibTorch on the GPU, declared dtypes" : "none (LibTorch has no CUDA): no speedups"},
          {"timing", config.cuda.time},
          {"stopping_rule",
           {{"min_samples", config.cuda.minSamples},
            {"max_rel_stddev", config.cuda.maxRelStddev},
            {"min_seconds", config.cuda.minSeconds},
            {"max_seconds", config.cuda.maxSeconds}}}};
}

nlohmann::json simRecord(const EvalConfig& config, const EvalHarness& harness) {
  return {{"trials", config.trials},
          {"size_set", harness.sizeSet},
          {"timeout_ms", config.sandbox.timeout.count()},
          {"host_threads", config.sandbox.hostThreads},
          {"memory_bytes", harness.sandbox->limits().memoryBytes},
          {"timing", "CPU simulator wall time; never reported as a speedup"},
          {"file_system_isolation", sandboxFileSystemIsolation()}};
}

}  // namespace

nlohmann::json startRunRecord(const EvalConfig& config, const ProblemSuite& suite, const CandidateBatch& batch, const BackendChoice& backend,
                              const RunFolder& run, const EvalHarness& harness, const std::map<std::string, std::string>& unjudgeable) {
  const nlohmann::json definition = runDefinition(config, suite, backend, harness.sizeSet);
  const bool resuming = config.resume && fs::exists(run.runJson);
  if (resuming) {
    requireSameDefinition(run.runJson, definition);
    requireSameSources(run.runJson, run.results, batch.candidates);
  }
  nlohmann::json record = {
      {"schema_version", 1},
      {"definition", definition},
      {"status", "running"},
      {"started", utcTimestamp()},
      {"backend", recordedBackend(config, backend)},
      {"backend_requested", backendName(config.backend)},
      {"backend_reason", backend.reason},
      {"arch", backend.arch},
      {"compile_timeout_ms", config.compileTimeout.count()},
      {"unjudgeable_problems", unjudgeable},
      {"seed", std::to_string(run.seed)},  // a string: JSON readers lose precision above 2^53
      {"problems_dir", fs::absolute(config.problemsDir).string()},
      {"candidates", fs::absolute(config.candidatesPath).string()},
      {"command_line", config.commandLine},
      {"candidate_set", batch.identity},
      {"environment", describeEnvironment()},
      {"compile_cache", harness.compiler.cacheDir().empty() ? nlohmann::json(nullptr) : nlohmann::json(harness.compiler.cacheDir().string())},
  };
  nlohmann::json origins = nlohmann::json::object();
  for (const auto& p : suite.problems()) {
    if (p.origin) origins[p.id] = {{"suite", p.origin->suite}, {"file", p.origin->file}, {"commit", p.origin->commit}};
  }
  if (!origins.empty()) record["problem_origins"] = std::move(origins);
  // Flagged problems are judged like any other; the reports keep them out of the metrics unless asked.
  nlohmann::json defects = nlohmann::json::object();
  for (const auto& p : suite.problems()) {
    if (p.defect) defects[p.id] = {{"kind", p.defect->kind}, {"reason", p.defect->reason}};
  }
  if (!defects.empty()) record["problem_defects"] = std::move(defects);
  record["include_defective"] = config.includeDefective;
  if (config.shard) record["shard"] = {{"index", config.shard->index}, {"count", config.shard->count}, {"problems", batch.shardProblems}};
  if (backend.kind == BackendKind::cuda) {
    record["environment"]["gpu"] = backend.device.value("name", "");
    record["cuda"] = cudaRecord(config, backend, harness);
  }
  if (backend.kind == BackendKind::sim) record["sim"] = simRecord(config, harness);
  if (resuming) record["started"] = readJsonFile(run.runJson).value("started", record["started"]);
  writeJsonFileAtomic(run.runJson, record);
  return record;
}

void finishRunRecord(nlohmann::json& record, const fs::path& runJson, const EvalRunSummary& summary, std::size_t candidates,
                     const BackendChoice& backend) {
  record["status"] = "finished";
  record["finished"] = utcTimestamp();
  record["candidates_total"] = candidates;
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [v, n] : summary.counts) counts[std::string(verdictName(v))] = n;
  record["verdict_counts"] = counts;
  if (backend.kind == BackendKind::cuda && backend.cuda && backend.cuda->size() > 1) {
    // Which device judged which candidate (each result carries it too).
    nlohmann::json deviceOf = nlohmann::json::object();
    for (const auto& r : summary.results) {
      if (r.device) deviceOf[fmt::format("{} {} {}", r.model, r.problem, r.sample)] = *r.device;
    }
    record["cuda"]["device_of"] = std::move(deviceOf);
  }
  writeJsonFileAtomic(runJson, record);
}

void failRunRecord(nlohmann::json& record, const fs::path& runJson, const std::string& error) {
  record["status"] = "failed";
  record["error"] = error;
  record["finished"] = utcTimestamp();
  try {
    writeJsonFileAtomic(runJson, record);
  } catch (const std::exception&) {
    // The error being reported (a full disk) may be why the record cannot be written either.
  }
}

}  // namespace cuset::detail
