// `runEvaluation`: one `cuset eval` run, as the list of its phases. Each candidate's own stages are
// evaluateCandidate's (eval_pipeline.cpp); run.json is run_record.cpp's.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <random>
#include <thread>

#include "cuset/common/error.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/common/thread_pool.hpp"
#include "cuset/evaluator/problem/large_sizes.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_files.hpp"
#include "cuset/evaluator/pipeline/reference_check.hpp"
#include "cuset/evaluator/pipeline/run_environment.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "eval_run_state.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string defaultRunDir(BackendKind backend) {
  std::string stamp = utcTimestamp();
  std::erase(stamp, ':');
  std::erase(stamp, '-');
  return fmt::format("runs/{}-{}", stamp, backendName(backend));
}

// Reads the seed recorded by an earlier run in the same folder, so a resumed run draws the same inputs.
std::optional<std::uint64_t> recordedSeed(const fs::path& runJson) {
  if (!fs::exists(runJson)) return std::nullopt;
  const nlohmann::json j = readJsonFile(runJson);
  if (!j.contains("seed") || !j["seed"].is_string()) throw makeError("{}: has no seed to resume with", runJson.string());
  return std::stoull(j["seed"].get<std::string>());
}

// One evaluation per run folder: a second one (a second `cuset eval --out`, a Slurm retry racing the
// first) would interleave its records with the first's.
FileLock lockRunFolder(const fs::path& dir) {
  fs::create_directories(dir);
  std::string holder;
  auto lock = FileLock::tryLock(dir / "run.lock", fmt::format("cuset eval, pid {} on {}, since {}", ::getpid(), hostName(), utcTimestamp()), holder);
  if (!lock) throw makeError("{} is in use by another evaluation ({}): wait for it to finish, or choose another --out", dir.string(), holder);
  return std::move(*lock);
}

std::uint64_t runSeed(const EvalConfig& config, const fs::path& runJson) {
  const std::optional<std::uint64_t> recorded = config.resume ? recordedSeed(runJson) : std::nullopt;
  if (recorded && config.seed && *recorded != *config.seed) {
    throw makeError("{} records seed {}; resuming with --seed {} would mix two input draws in one run", runJson.string(), *recorded, *config.seed);
  }
  if (recorded) return *recorded;
  return config.seed ? *config.seed : (std::uint64_t{std::random_device{}()} << 32 | std::random_device{}());
}

std::size_t workerCount(const EvalConfig& config) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t jobs = config.jobs ? config.jobs : cores;
  // Each job is a worker process with its own memory budget: more than a few per core only thrashes.
  if (jobs > 4 * cores) {
    log::warn("--jobs {} is more than 4 per core on this machine ({} cores): using {}", jobs, cores, 4 * cores);
    return 4 * cores;
  }
  return jobs;
}

fs::path cacheRoot(const EvalConfig& config) { return config.cacheDir.empty() ? defaultCacheDir() : config.cacheDir; }

std::string runSizeSet(const EvalConfig& config, BackendKind backend) {
  return !config.sizeSet.empty() ? config.sizeSet : backend == BackendKind::cuda ? "full" : "small";
}

// KernelBench solutions are recorded at the size set this run judges, and their memory is checked
// against the device that runs them: the simulator's worker limit (the region it holds is half of it:
// the supervisor's copy and the worker's), or on a GPU the allocation itself at run time.
TranslatorOptions translatorOptions(const EvalConfig& config, BackendKind backend, std::size_t jobs, const NvrtcCompiler& compiler) {
  TranslatorOptions o{.cacheDir = config.useCache ? cacheRoot(config) / "kernelbench" : fs::path(), .timeout = config.translateTimeout};
  o.deviceCompiler = &compiler;
  // On a GPU, Triton's kernels are compiled as Triton compiles them there (for the run's architecture);
  // the simulator runs Triton's sm_80 code.
  if (backend == BackendKind::cuda) o.tritonCapability = archNumber(compiler.options().arch);
  o.sizeSets = {runSizeSet(config, backend)};
  // The simulator judges a scaled size set: the plan is also recorded and checked at the problem's own
  // (KernelBench's) sizes, where a launch valid when scaled may not be (a grid.y past 65,535).
  if (backend == BackendKind::sim && o.sizeSets.front() != "full") o.checkedSizeSets = {"full"};
  // ... and run at `large` where the problem has it (a kernel that passed at `small` gets a trial there).
  if (backend == BackendKind::sim && o.sizeSets.front() == "small" && config.largeSizesMib > 0) o.sizeSets.push_back(std::string(kLargeSizeSet));
  if (backend == BackendKind::sim) {
    const std::size_t worker = config.sandbox.memoryBytes ? config.sandbox.memoryBytes : defaultSandboxMemory(jobs);
    o.budget = {.bytes = static_cast<std::int64_t>(worker / 2),
                .what = fmt::format("device memory the simulator's workers hold at --memory-limit {:.3g} GiB", worker / double(1 << 30)),
                .verdict = Verdict::unsupported};
  }
  return o;
}

}  // namespace

RunFolder::RunFolder(const EvalConfig& config, BackendKind backend)
    : dir(config.outDir.empty() ? fs::path(defaultRunDir(backend)) : config.outDir),
      lock(lockRunFolder(dir)),
      runJson(dir / "run.json"),
      results(dir / "results.jsonl", config.resume),
      seed(runSeed(config, runJson)) {}

// NVRTC runs in helper processes: a compile that never ends is a compile_error, not a hung run.
// Correctness references run on the GPU where the cuda backend runs and LibTorch has CUDA.
EvalHarness::EvalHarness(const EvalConfig& config, BackendChoice choice)
    : backend(std::move(choice)),
      compiler(CompileOptions{.arch = backend.arch, .isolated = true, .timeout = config.compileTimeout},
               config.useCache ? cacheRoot(config) / "nvrtc" : fs::path()),
      references(backend.kind == BackendKind::cuda && TorchReference::cudaAvailable()),
      jobs(workerCount(config)),
      translator(translatorOptions(config, backend.kind, jobs, compiler)) {
  if (backend.kind == BackendKind::sim) {
    // The worker loads each library from disk, so --no-cache gives the run a folder of its own, removed
    // when the run ends, instead of no folder. The precompiled prelude is toolchain state, not a
    // candidate's result, and stays shared.
    fs::path libraries = cacheRoot(config) / "sim";
    if (!config.useCache) libraries = uncachedLibraries.emplace(cacheRoot(config) / "sim-uncached").path();
    simCompiler = std::make_unique<SimCompiler>(
        SimToolchain::fromBuild(), libraries,
        SimCompilerOptions{.pchDir = config.precompiledPrelude ? cacheRoot(config) / "sim-pch" : fs::path(), .codegen = config.simCodegen});
    sandbox = std::make_unique<SandboxPool>(jobs, config.sandbox);
  }
  if (const std::string specific = archSpecificTarget(backend.arch); backend.kind == BackendKind::cuda && !specific.empty()) {
    CompileOptions options = compiler.options();  // the run's compiler in all but the target
    options.arch = specific;
    archSpecificCompiler = std::make_unique<NvrtcCompiler>(std::move(options), compiler.cacheDir());
  }
  sizeSet = runSizeSet(config, backend.kind);
}

// Every field the harness's constructor (and chooseBackend) reads; a field added there belongs here.
std::string harnessKey(const EvalConfig& c) {
  const auto ms = [](std::chrono::milliseconds d) { return d.count(); };
  nlohmann::json key = {
      {"backend", backendName(c.backend)},
      {"arch", c.arch},
      {"compile_timeout", ms(c.compileTimeout)},
      {"translate_timeout", ms(c.translateTimeout)},
      {"jobs", c.jobs},
      {"cache", c.useCache ? cacheRoot(c).string() : std::string()},
      {"sizes", c.sizeSet},
      {"large_mib", c.largeSizesMib},
      {"sandbox",
       {ms(c.sandbox.timeout), ms(c.sandbox.slowLimit), c.sandbox.memoryBytes, c.sandbox.hostThreads, c.sandbox.stackBytes, c.sandbox.sharedPayload}},
      {"pch", c.precompiledPrelude},
      {"codegen", {c.simCodegen.alignmentCheck, c.simCodegen.contractFma, c.simCodegen.optimization, c.simCodegen.tailReadCheck}}};
  // The GPU's options configure its worker, so they are part of the harness only where a GPU may be
  // used: a trainer varying `num_perf_trials` per request must not rebuild a simulator's harness each time.
  if (c.backend == BackendKind::cuda || c.backend == BackendKind::automatic) {
    key["cuda"] = {c.cuda.timer,
                   c.cuda.time,
                   c.cuda.minSamples,
                   c.cuda.maxRelStddev,
                   c.cuda.minSeconds,
                   c.cuda.maxSeconds,
                   ms(c.cuda.trialTimeout),
                   c.cuda.device.value_or(-1),
                   c.cuda.kernelbenchTiming,
                   c.cuda.referenceTimingDir.string(),
                   c.cuda.retimeReference};
    key["devices"] = c.devices;
  }
  return key.dump();
}

namespace {

CandidateBatch readCandidateBatch(const EvalConfig& config, const ProblemSuite& suite) {
  std::string model = config.defaultModel;
  if (model.empty()) {
    fs::path p = config.candidatesPath;
    if (p.filename().empty()) p = p.parent_path();
    model = p.stem().string();
  }
  CandidateBatch batch;
  batch.candidates = readCandidates(config.candidatesPath, model);
  resolveKernelBenchRunFiles(batch.candidates, suite);
  // The whole set's identity, before a shard takes its part, so `cuset merge` can check shards match.
  batch.identity = {{"fingerprint", candidateSetFingerprint(batch.candidates)}, {"candidates", batch.candidates.size()}};
  if (!config.shard) return batch;
  if (!config.seed && !config.resume) throw Error("--shard needs --seed: every shard must draw the same inputs, so that merged shards are one run");
  // `small` unless --sizes says otherwise: the partition may not depend on which backend a machine picks.
  batch.shardProblems = shardProblems(batch.candidates, suite, config.sizeSet.empty() ? "small" : config.sizeSet, *config.shard);
  std::erase_if(batch.candidates, [&](const Candidate& c) { return !batch.shardProblems.contains(c.problemId); });
  log::info("shard {}/{}: {} problem(s), {} of {} candidates", config.shard->index, config.shard->count, batch.shardProblems.size(),
            batch.candidates.size(), batch.identity["candidates"].get<std::size_t>());
  return batch;
}

// Fails here, before any compile work, with the worker's one line when no GPU can be used; for `auto`
// that line is the reason the simulator runs instead.
BackendChoice chooseBackend(const EvalConfig& config) {
  BackendChoice choice;
  choice.kind = config.backend;
  choice.arch = config.arch;
  if (config.backend == BackendKind::cuda || config.backend == BackendKind::automatic) {
    try {
      CudaOptions cuda = config.cuda;
      if (config.useCache && cuda.referenceTimingDir.empty()) cuda.referenceTimingDir = cacheRoot(config) / "reference-timing";
      choice.cuda = std::make_unique<CudaDevices>(cuda, config.devices);
      choice.devices = choice.cuda->probe();
      choice.device = choice.cuda->firstDevice();
      if (config.backend == BackendKind::automatic) choice.reason = fmt::format("a usable GPU: {}", choice.device.value("name", "unnamed device"));
      choice.kind = BackendKind::cuda;
    } catch (const std::exception& e) {
      if (config.backend == BackendKind::cuda) throw;
      choice.cuda.reset();
      choice.kind = BackendKind::sim;
      choice.reason = fmt::format("no usable GPU ({})", e.what());
    }
    if (choice.kind == BackendKind::cuda && choice.arch.empty()) choice.arch = archForDevice(choice.device.value("compute_capability", ""));
  }
  if (config.backend == BackendKind::automatic) log::info("backend: {} (auto: {})", backendName(choice.kind), choice.reason);
  if (choice.arch.empty()) choice.arch = "sm_90";
  return choice;
}

// Nothing runs here when a server judges: no device, no simulator, no reference check; the server
// does all of it for each candidate (remote_judge.hpp).
BackendChoice remoteBackend(const EvalConfig& config) {
  BackendChoice choice;
  choice.kind = BackendKind::compileOnly;
  choice.reason = "judged by " + config.remote->describe();
  choice.arch = config.arch.empty() ? "sm_90" : config.arch;
  log::info("backend: {}", choice.reason);
  return choice;
}

// Problems of the batch without the size set this run judges at: their candidates are `unsupported`
// with the reason (an imported network no simulator-sized set fits has only `medium`/`full`). A set no
// problem of the batch has is a mistyped --sizes, an error.
std::map<std::string, std::string> problemsWithoutSizeSet(const ProblemSuite& suite, const CandidateBatch& batch, BackendKind backend,
                                                          const std::string& sizeSet) {
  std::map<std::string, std::string> missing;
  if (backend == BackendKind::compileOnly) return missing;
  std::set<std::string> ids;
  for (const auto& c : batch.candidates) ids.insert(c.problemId);
  std::size_t present = 0;
  for (const auto& id : ids) {
    const Problem* p = suite.find(id);
    if (!p) continue;
    if (p->findSizeSet(sizeSet)) {
      ++present;
      continue;
    }
    missing[id] = backend == BackendKind::sim && sizeSet == "small"
                      ? fmt::format("no size set small enough to simulate: {} has only {} (judge it on a GPU, --backend cuda)", id, p->sizeSetNames())
                      : fmt::format("{} has no size set '{}' (it has {})", id, sizeSet, p->sizeSetNames());
  }
  if (present == 0 && !missing.empty()) {
    throw makeError("no problem of this run has a size set '{}' (--sizes); {}", sizeSet, missing.begin()->second);
  }
  if (!missing.empty()) log::info("{} problem(s) have no '{}' size set: their candidates are unsupported in this run", missing.size(), sizeSet);
  return missing;
}

// What identifies a reference for the reference check's memory: its folder, id and text (an engine's
// later run may judge against another suite, or the same folder rewritten).
std::string referenceIdentity(const Problem& problem, const std::string& sizeSet) {
  return ContentHasher()
      .add(fs::absolute(problem.directory).string())
      .add(problem.id)
      .add(problem.reference)
      .add(problem.origin ? problem.origin->source : std::string())
      .add(sizeSet)
      .digest()
      .hex();
}

// Every reference the candidates still to judge need runs once first, in a helper under a time limit
// (on the problem's cheapest set for the cuda backend: its `full` sizes are for the GPU), unless this
// harness has run it before.
std::map<std::string, std::string> checkReferences(const EvalConfig& config, const ProblemSuite& suite, const CandidateBatch& batch,
                                                   const RunFolder& run, EvalHarness& harness,
                                                   const std::map<std::string, std::string>& unjudgeable) {
  const BackendKind backend = harness.backend.kind;
  if (backend == BackendKind::compileOnly) return {};
  const std::string sizeSet = backend == BackendKind::cuda ? "" : harness.sizeSet;
  std::map<std::string, std::string> identities;  // problem id -> referenceIdentity
  std::set<std::string> needed;
  for (const auto& c : batch.candidates) {
    const Problem* p = suite.find(c.problemId);
    if (!p || run.results.contains(c.key()) || unjudgeable.contains(c.problemId)) continue;
    const std::string identity = referenceIdentity(*p, sizeSet);
    identities[c.problemId] = identity;
    if (!harness.checkedReferences.contains(identity)) needed.insert(c.problemId);
  }
  const std::map<std::string, std::string> found =
      harness.referenceChecker.findBroken(config.problemsDir, needed, sizeSet, run.seed, config.referenceTimeout);
  for (const auto& id : needed) {
    const auto it = found.find(id);
    harness.checkedReferences[identities[id]] = it == found.end() ? std::string() : it->second;
  }
  std::map<std::string, std::string> broken;
  for (const auto& [id, identity] : identities) {
    const std::string& why = harness.checkedReferences[identity];
    if (!why.empty()) broken[id] = "this problem's reference cannot be run, so no kernel can be judged against it: " + why;
  }
  return broken;
}

// Judges every candidate not judged yet, `jobs` at a time, appending each result as it comes. Returns
// one slot per candidate: the fresh result, or empty for one an earlier run judged.
std::vector<std::optional<EvalResult>> judgeCandidates(const EvalConfig& config, const CandidateBatch& batch, const EvalServices& services,
                                                       RunFolder& run, std::size_t jobs, nlohmann::json& record, EvalRunSummary& summary) {
  const auto& candidates = batch.candidates;
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (run.results.contains(candidates[i].key()))
      ++summary.skippedAsDone;
    else
      todo.push_back(i);
  }
  if (summary.skippedAsDone > 0) log::info("resuming: {} of {} candidates already done", summary.skippedAsDone, candidates.size());

  std::vector<std::optional<EvalResult>> fresh(candidates.size());  // one slot per candidate: no locking
  ThreadPool pool(jobs);
  ProgressBar progress("eval", todo.size(), "cand", config.showProgress);
  std::vector<std::future<void>> pending;
  pending.reserve(todo.size());
  for (std::size_t index : todo) {
    pending.push_back(pool.submit([&, index] {
      EvalResult r = evaluateCandidate(candidates[index], services);
      run.results.append(r);
      fresh[index] = std::move(r);
      progress.advance();
    }));
  }
  try {
    for (auto& f : pending) f.get();  // rethrows harness errors (e.g. a full disk), not candidate failures
  } catch (const std::exception& e) {
    for (auto& f : pending) {
      if (f.valid()) f.wait();
    }
    failRunRecord(record, run.runJson, e.what());
    throw;
  }
  summary.evaluatedNow = todo.size();
  return fresh;
}

// Every result in candidate order, whichever run produced it.
void collectResults(const CandidateBatch& batch, const RunFolder& run, std::vector<std::optional<EvalResult>>& fresh, EvalRunSummary& summary) {
  std::map<std::string, const EvalResult*> previous;
  for (const auto& r : run.results.previousResults()) previous[r.key()] = &r;
  for (std::size_t i = 0; i < batch.candidates.size(); ++i) {
    const EvalResult* r = fresh[i] ? &*fresh[i] : nullptr;
    if (!r) {
      auto it = previous.find(batch.candidates[i].key());
      if (it == previous.end()) continue;
      r = it->second;
    }
    summary.results.push_back(*r);
    ++summary.counts[r->verdict];
  }
}

}  // namespace
}  // namespace detail

EvaluationEngine::EvaluationEngine() = default;
EvaluationEngine::~EvaluationEngine() = default;

detail::EvalHarness& EvaluationEngine::harnessFor(const EvalConfig& config, bool& warm) {
  using namespace detail;
  // A remote judge is the run's own object: nothing of this machine's is kept for it.
  const std::string key = config.remote ? std::string() : harnessKey(config);
  warm = harness_ && !key.empty() && key == key_;
  if (!warm) {
    harness_.reset();  // its workers and devices go before the next ones start
    BackendChoice backend = config.remote ? remoteBackend(config) : chooseBackend(config);
    harness_ = std::make_unique<EvalHarness>(config, std::move(backend));
    key_ = key;
  }
  return *harness_;
}

EvalRunSummary EvaluationEngine::run(const EvalConfig& config) {
  using namespace detail;
  const auto start = Clock::now();
  ProblemSuite suite = ProblemSuite::load(config.problemsDir);
  suite.requireNoErrors();
  if (config.kernelbench.precision != "fp32") {
    suite.castFloat32To(config.kernelbench.precision == "fp16" ? DType::float16 : DType::bfloat16, Tolerance{1e-2, 1e-2});
  }
  const CandidateBatch batch = readCandidateBatch(config, suite);
  EvalRunSummary summary;
  EvalHarness& harness = harnessFor(config, summary.warmHarness);
  const BackendChoice& backend = harness.backend;
  if (backend.kind == BackendKind::sim && harness.sizeSet == "small" && config.largeSizesMib > 0) {
    suite.addLargeSizeSets({.maxBytes = config.largeSizesMib << 20});
  }
  RunFolder run(config, backend.kind);
  std::map<std::string, std::string> unjudgeable = problemsWithoutSizeSet(suite, batch, backend.kind, harness.sizeSet);
  unjudgeable.merge(checkReferences(config, suite, batch, run, harness, unjudgeable));
  const RunForms forms(config, harness);
  const EvalServices services{
      .suite = suite,
      .nvrtc = harness.compiler,
      .nvrtcArchSpecific = harness.archSpecificCompiler.get(),
      .backend = backend.kind,
      .simCompiler = harness.simCompiler.get(),
      .sandbox = harness.sandbox.get(),
      .references = &harness.references,
      .correctness =
          CorrectnessOptions{.seed = run.seed, .trials = config.trials, .sizeSet = harness.sizeSet, .raceCheckCorrect = config.raceCheck == "all"},
      .cuda = backend.cuda.get(),
      .unjudgeable = &unjudgeable,
      .frontends = {&forms.triton, &forms.kernelbench, &forms.manifest},
      .secondOpinions = &forms.kernelbenchCheck,
      .remote = config.remote.get()};
  nlohmann::json record = startRunRecord(config, suite, batch, backend, run, harness, unjudgeable);

  summary.backend = backend.kind;
  summary.backendReason = backend.reason;
  summary.runDir = run.dir;
  std::vector<std::optional<EvalResult>> fresh = judgeCandidates(config, batch, services, run, harness.jobs, record, summary);
  collectResults(batch, run, fresh, summary);
  summary.kernelbenchFiles = writeKernelBenchResultFiles(
      run.dir, suite, summary.results, config.kernelbench,
      KernelBenchHardware{.name = backend.kind == BackendKind::cuda ? backend.device.value("name", "cuda device") : "cpu_simulator",
                          .gpu = backend.kind == BackendKind::cuda});
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  finishRunRecord(record, run.runJson, summary, batch.candidates.size(), backend);
  return summary;
}

EvalRunSummary runEvaluation(const EvalConfig& config) { return EvaluationEngine().run(config); }

}  // namespace cuset
