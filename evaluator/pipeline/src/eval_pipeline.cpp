#include "cuset/evaluator/pipeline/eval_pipeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/common/thread_pool.hpp"
#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/candidate/source_policy.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/pipeline/reference_check.hpp"
#include "cuset/evaluator/pipeline/run_environment.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "cuset/evaluator/results/results_log.hpp"
#include "cuset/evaluator/sim/sim_backend.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

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

}  // namespace

std::string archForDevice(const std::string& computeCapability) {
  const std::size_t dot = computeCapability.find('.');
  if (dot == std::string::npos) return "sm_90";
  const int cc = std::stoi(computeCapability.substr(0, dot)) * 10 + std::stoi(computeCapability.substr(dot + 1));
  const auto archs = NvrtcCompiler::supportedArchs();
  if (std::find(archs.begin(), archs.end(), cc) != archs.end()) return fmt::format("sm_{}", cc);
  // A GPU newer than this NVRTC: PTX for the newest architecture it knows, JIT-compiled by the driver.
  int best = 0;
  for (int a : archs) {
    if (a <= cc) best = std::max(best, a);
  }
  return fmt::format("compute_{}", best ? best : archs.back());
}

std::string_view backendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::compileOnly: return "compile-only";
    case BackendKind::sim: return "sim";
    case BackendKind::cuda: return "cuda";
    case BackendKind::automatic: return "auto";
  }
  return "?";
}

std::optional<BackendKind> parseBackend(std::string_view name) {
  for (BackendKind k : {BackendKind::compileOnly, BackendKind::sim, BackendKind::cuda, BackendKind::automatic}) {
    if (backendName(k) == name) return k;
  }
  return std::nullopt;
}

EvalResult evaluateCandidate(const Candidate& candidate, const EvalServices& services) {
  const ProblemSuite& suite = services.suite;
  const auto start = Clock::now();
  EvalResult r;
  r.problem = candidate.problemId;
  r.sample = candidate.sample;
  r.model = candidate.model;
  r.backend = std::string(backendName(services.backend));
  r.origin = candidate.origin;
  r.source = candidate.source;
  r.sourceHash = hashString(candidate.source).hex();
  auto finish = [&](Verdict v, std::string reason) {
    r.verdict = v;
    r.reason = std::move(reason);
    r.timings.totalMs = msSince(start);
    return r;
  };

  if (!candidate.readError.empty()) return finish(Verdict::invalid_submission, candidate.readError);
  const Problem* problem = suite.find(candidate.problemId);
  if (problem == nullptr) {
    return finish(Verdict::invalid_submission,
                  fmt::format("unknown problem id '{}' ({} problems loaded from {})", candidate.problemId, suite.problems().size(),
                              suite.root().string()));
  }

  auto manifest = parseLaunchManifest(candidate.source, *problem);
  r.timings.manifestMs = msSince(start);
  if (!manifest) return finish(Verdict::invalid_submission, manifest.error());
  if (auto include = disallowedInclude(candidate.source)) return finish(Verdict::invalid_submission, *include);

  CompileOutput compiled = services.nvrtc.compile(candidate.source, manifest->kernelNames());
  r.timings.compileMs = compiled.milliseconds;
  r.compileLog = std::move(compiled.log);
  r.compileCacheHit = compiled.cacheHit;
  switch (compiled.status) {
    case CompileOutput::Status::compileError:
      return finish(Verdict::compile_error, firstErrorLine(r.compileLog));
    case CompileOutput::Status::missingKernels: {
      std::string names;
      for (const auto& n : compiled.missingKernels) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", n);
      return finish(Verdict::invalid_submission,
                    fmt::format("manifest names kernel(s) {} that the compiled module does not define as __global__ "
                                "(check the name, extern \"C\", or template arguments)", names));
    }
    case CompileOutput::Status::ok:
      break;
  }
  // A launch needs its kernel's static shared memory plus the manifest's dynamic bytes on one SM.
  for (const auto& launch : manifest->launches) {
    const auto it = compiled.staticSharedBytes.find(launch.kernel);
    if (it == compiled.staticSharedBytes.end()) continue;
    for (const auto& set : problem->sizeSets) {
      const std::int64_t dynamic = *launch.sharedBytes.evaluate(set.sizes);  // validated with the manifest
      if (static_cast<std::int64_t>(it->second) + dynamic > LaunchLimits::maxSharedBytes + LaunchLimits::reservedSharedBytes) {
        return finish(Verdict::invalid_submission,
                      fmt::format("kernel {} uses {} bytes of static and, with sizes '{}', {} bytes of dynamic shared memory: over the "
                                  "{} bytes a block can have",
                                  launch.kernel, it->second, set.name, dynamic, LaunchLimits::maxSharedBytes));
      }
    }
  }
  if (services.backend == BackendKind::compileOnly) return finish(Verdict::compiled, "");
  if (services.brokenReferences) {
    if (auto it = services.brokenReferences->find(problem->id); it != services.brokenReferences->end()) {
      return finish(Verdict::unsupported, "this problem's reference cannot be run, so no kernel can be judged against it: " + it->second);
    }
  }
  try {
    if (services.backend == BackendKind::cuda) {
      // The whole candidate, trials and timing, on one device.
      const CudaDevices::Lease gpu = services.cuda->acquire();
      runCudaBackend(*problem, *manifest, compiled, gpu.pool(), *services.references, services.correctness, r);
      r.device = gpu.ordinal();
    } else {
      runSimBackend(*problem, *manifest, candidate.source, *services.simCompiler, *services.sandbox, *services.references,
                    services.correctness, r);
    }
  } catch (const ReferenceFailure& e) {
    // A reference that fails on these inputs (the check at the start passed it on others): the
    // problem's candidates cannot be judged, the rest of the run can.
    r.verdict = Verdict::unsupported;
    r.reason = std::string("this problem's reference failed, so the kernel cannot be judged: ") + e.what();
    r.timings.totalMs = msSince(start);
    return r;
  } catch (const std::exception& e) {
    // A harness failure (the host compiler missing, a full disk) is not the candidate's fault: it
    // stops the run with the reason rather than recording a verdict.
    throw makeError("{} sample {} ({}): {}", candidate.problemId, candidate.sample, candidate.origin, e.what());
  }
  r.timings.totalMs = msSince(start);
  return r;
}

EvalRunSummary runEvaluation(const EvalConfig& config) {
  const auto start = Clock::now();
  EvalRunSummary summary;

  const ProblemSuite suite = ProblemSuite::load(config.problemsDir);
  suite.requireNoErrors();
  std::string model = config.defaultModel;
  if (model.empty()) {
    fs::path p = config.candidatesPath;
    if (p.filename().empty()) p = p.parent_path();
    model = p.stem().string();
  }
  std::vector<Candidate> candidates = readCandidates(config.candidatesPath, model);
  // The whole set's identity, before a shard takes its part, so `cuset merge` can check shards match.
  const nlohmann::json candidateSet = {{"fingerprint", candidateSetFingerprint(candidates)}, {"candidates", candidates.size()}};
  std::set<std::string> shardIds;
  if (config.shard) {
    if (!config.seed && !config.resume) throw Error("--shard needs --seed: every shard must draw the same inputs, so that merged shards are one run");
    // `small` unless --sizes says otherwise: the partition may not depend on which backend a machine picks.
    shardIds = shardProblems(candidates, suite, config.sizeSet.empty() ? "small" : config.sizeSet, *config.shard);
    std::erase_if(candidates, [&](const Candidate& c) { return !shardIds.contains(c.problemId); });
    log::info("shard {}/{}: {} problem(s), {} of {} candidates", config.shard->index, config.shard->count, shardIds.size(), candidates.size(),
              candidateSet["candidates"].get<std::size_t>());
  }

  const fs::path cacheRoot = config.cacheDir.empty() ? defaultCacheDir() : config.cacheDir;
  std::unique_ptr<CudaDevices> cuda;
  nlohmann::json device = nullptr;
  nlohmann::json devices = nlohmann::json::array();
  std::string arch = config.arch;
  summary.backend = config.backend;
  if (config.backend == BackendKind::cuda || config.backend == BackendKind::automatic) {
    // Fails here, before any compile work, with the worker's one line when no GPU can be used; for
    // `auto` that line is the reason the simulator runs instead.
    try {
      cuda = std::make_unique<CudaDevices>(config.cuda, config.devices);
      devices = cuda->probe();
      device = cuda->firstDevice();
      if (config.backend == BackendKind::automatic) {
        summary.backendReason = fmt::format("a usable GPU: {}", device.value("name", "unnamed device"));
      }
      summary.backend = BackendKind::cuda;
    } catch (const std::exception& e) {
      if (config.backend == BackendKind::cuda) throw;
      cuda.reset();
      summary.backend = BackendKind::sim;
      summary.backendReason = fmt::format("no usable GPU ({})", e.what());
    }
    if (summary.backend == BackendKind::cuda && arch.empty()) arch = archForDevice(device.value("compute_capability", ""));
  }
  if (config.backend == BackendKind::automatic) {
    log::info("backend: {} (auto: {})", backendName(summary.backend), summary.backendReason);
  }
  const BackendKind backend = summary.backend;
  summary.runDir = config.outDir.empty() ? fs::path(defaultRunDir(backend)) : config.outDir;
  fs::create_directories(summary.runDir);
  // One evaluation per run folder: a second one (a second `cuset eval --out`, a Slurm retry racing the
  // first) would interleave its records with the first's.
  std::string holder;
  const auto runLock = FileLock::tryLock(summary.runDir / "run.lock",
                                         fmt::format("cuset eval, pid {} on {}, since {}", ::getpid(), hostName(), utcTimestamp()), holder);
  if (!runLock) {
    throw makeError("{} is in use by another evaluation ({}): wait for it to finish, or choose another --out", summary.runDir.string(), holder);
  }
  const fs::path runJsonPath = summary.runDir / "run.json";
  ResultsLog results(summary.runDir / "results.jsonl", config.resume);

  std::optional<std::uint64_t> seed = config.resume ? recordedSeed(runJsonPath) : std::nullopt;
  if (seed && config.seed && *seed != *config.seed) {
    throw makeError("{} records seed {}; resuming with --seed {} would mix two input draws in one run", runJsonPath.string(), *seed,
                    *config.seed);
  }
  if (!seed) seed = config.seed ? *config.seed : (std::uint64_t{std::random_device{}()} << 32 | std::random_device{}());
  if (arch.empty()) arch = "sm_90";
  // NVRTC runs in helper processes: a compile that never ends is a compile_error, not a hung run.
  const NvrtcCompiler compiler(CompileOptions{.arch = arch, .isolated = true, .timeout = config.compileTimeout},
                               config.useCache ? cacheRoot / "nvrtc" : fs::path());
  std::unique_ptr<SimCompiler> simCompiler;
  std::unique_ptr<SandboxPool> sandbox;
  // Correctness references on the GPU where the cuda backend runs and LibTorch has CUDA.
  ReferenceCache references(backend == BackendKind::cuda && TorchReference::cudaAvailable());
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::size_t jobs = config.jobs ? config.jobs : cores;
  // Each job is a worker process with its own memory budget: more than a few per core only thrashes.
  if (jobs > 4 * cores) {
    log::warn("--jobs {} is more than 4 per core on this machine ({} cores): using {}", jobs, cores, 4 * cores);
    jobs = 4 * cores;
  }
  std::optional<ScratchDir> uncachedLibraries;
  if (backend == BackendKind::sim) {
    // The worker loads each library from disk, so --no-cache gives the run a folder of its own, removed
    // when the run ends, instead of no folder. The precompiled prelude is toolchain state, not a
    // candidate's result, and stays shared.
    fs::path libraries = cacheRoot / "sim";
    if (!config.useCache) libraries = uncachedLibraries.emplace(cacheRoot / "sim-uncached").path();
    simCompiler = std::make_unique<SimCompiler>(SimToolchain::fromBuild(), libraries,
                                                SimCompilerOptions{.pchDir = config.precompiledPrelude ? cacheRoot / "sim-pch" : fs::path()});
    sandbox = std::make_unique<SandboxPool>(jobs, config.sandbox);
  }
  const std::string sizeSet = !config.sizeSet.empty() ? config.sizeSet : backend == BackendKind::cuda ? "full" : "small";
  for (const auto& p : suite.problems()) {
    if (backend != BackendKind::compileOnly && !p.findSizeSet(sizeSet)) {
      throw makeError("problem {} has no size set '{}' (--sizes)", p.id, sizeSet);
    }
  }
  // Every reference the candidates need runs once first, in a helper under a time limit (on `small`
  // for the cuda backend: its `full` sizes are for the GPU).
  std::map<std::string, std::string> brokenReferences;
  if (backend != BackendKind::compileOnly) {
    std::set<std::string> needed;
    for (const auto& c : candidates) {
      if (suite.find(c.problemId) && !results.contains(c.key())) needed.insert(c.problemId);
    }
    brokenReferences = findBrokenReferences(config.problemsDir, needed, backend == BackendKind::cuda ? "small" : sizeSet, *seed,
                                            config.referenceTimeout);
  }
  EvalServices services{suite, compiler, backend, simCompiler.get(), sandbox.get(), &references,
                        CorrectnessOptions{*seed, config.trials, sizeSet}, cuda.get(), &brokenReferences};

  // What makes two runs comparable: a resume may not change any of it (a resumed run with other trials,
  // another backend or an edited suite would mix two evaluations under one report).
  nlohmann::json definition = {{"backend", backendName(backend)}, {"arch", arch}, {"trials", config.trials}, {"size_set", sizeSet},
                               {"compile_timeout_ms", config.compileTimeout.count()}, {"problems_hash", suiteHash(suite)}};
  if (backend == BackendKind::sim) definition["trial_timeout_ms"] = config.sandbox.timeout.count();
  if (backend == BackendKind::cuda) definition["cuda"] = {{"timer", config.cuda.timer}, {"timing", config.cuda.time}};
  if (config.shard) definition["shard"] = fmt::format("{}/{}", config.shard->index, config.shard->count);
  if (config.resume && fs::exists(runJsonPath)) {
    const nlohmann::json before = readJsonFile(runJsonPath).value("definition", nlohmann::json::object());
    std::vector<std::string> changed;
    for (const auto& [key, value] : definition.items()) {
      if (before.contains(key) && before[key] != value) changed.push_back(fmt::format("{} {} -> {}", key, dumpJson(before[key]), dumpJson(value)));
    }
    if (!changed.empty()) {
      throw makeError("{}: --resume would mix two evaluations ({}); resume with the run's own settings, or choose another --out",
                      runJsonPath.string(), fmt::format("{}", fmt::join(changed, ", ")));
    }
    // A candidate already judged must be the same code now.
    std::map<std::string, std::string> judged;
    for (const auto& r : results.previousResults()) judged[r.key()] = r.sourceHash;
    for (const auto& c : candidates) {
      const auto it = judged.find(c.key());
      if (it != judged.end() && !it->second.empty() && c.readError.empty() && it->second != hashString(c.source).hex()) {
        throw makeError("{}: {} sample {} of model '{}' ({}) was judged with another source; --resume would mix two versions of it "
                        "(choose another --out)",
                        runJsonPath.string(), c.problemId, c.sample, c.model, c.origin);
      }
    }
  }

  nlohmann::json runJson = {
      {"schema_version", 1},
      {"definition", definition},
      {"status", "running"},
      {"started", utcTimestamp()},
      {"backend", backendName(backend)},
      {"backend_requested", backendName(config.backend)},
      {"backend_reason", summary.backendReason},
      {"arch", arch},
      {"compile_timeout_ms", config.compileTimeout.count()},
      {"broken_references", brokenReferences},
      {"seed", std::to_string(*seed)},  // a string: JSON readers lose precision above 2^53
      {"problems_dir", fs::absolute(config.problemsDir).string()},
      {"candidates", fs::absolute(config.candidatesPath).string()},
      {"command_line", config.commandLine},
      {"candidate_set", candidateSet},
      {"environment", describeEnvironment()},
      {"compile_cache", compiler.cacheDir().empty() ? nlohmann::json(nullptr) : nlohmann::json(compiler.cacheDir().string())},
  };
  nlohmann::json origins = nlohmann::json::object();
  for (const auto& p : suite.problems()) {
    if (p.origin) origins[p.id] = {{"suite", p.origin->suite}, {"file", p.origin->file}, {"commit", p.origin->commit}};
  }
  if (!origins.empty()) runJson["problem_origins"] = std::move(origins);
  if (config.shard) runJson["shard"] = {{"index", config.shard->index}, {"count", config.shard->count}, {"problems", shardIds}};
  if (backend == BackendKind::cuda) {
    runJson["environment"]["gpu"] = device.value("name", "");
    runJson["cuda"] = {{"trials", config.trials},
                       {"size_set", sizeSet},
                       {"device", device},
                       {"devices", devices},
                       {"timer", config.cuda.timer},
                       {"references_on", references.onGpu() ? "cuda" : "cpu"},
                       {"reference_timing", TorchReference::cudaAvailable() ? "LibTorch on the GPU, declared dtypes" : "none (LibTorch has no CUDA): no speedups"},
                       {"timing", config.cuda.time},
                       {"stopping_rule",
                        {{"min_samples", config.cuda.minSamples},
                         {"max_rel_stddev", config.cuda.maxRelStddev},
                         {"min_seconds", config.cuda.minSeconds},
                         {"max_seconds", config.cuda.maxSeconds}}}};
  }
  if (backend == BackendKind::sim) {
    runJson["sim"] = {{"trials", config.trials},
                      {"size_set", sizeSet},
                      {"timeout_ms", config.sandbox.timeout.count()},
                      {"host_threads", config.sandbox.hostThreads},
                      {"memory_bytes", sandbox->limits().memoryBytes},
                      {"timing", "CPU simulator wall time; never reported as a speedup"},
                      {"file_system_isolation", sandboxFileSystemIsolation()}};
  }
  if (config.resume && fs::exists(runJsonPath)) runJson["started"] = readJsonFile(runJsonPath).value("started", runJson["started"]);
  writeJsonFileAtomic(runJsonPath, runJson);

  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (results.contains(candidates[i].key())) ++summary.skippedAsDone;
    else todo.push_back(i);
  }
  if (summary.skippedAsDone > 0) log::info("resuming: {} of {} candidates already done", summary.skippedAsDone, candidates.size());

  std::vector<std::optional<EvalResult>> fresh(candidates.size());  // one slot per candidate: no locking
  {
    ThreadPool pool(jobs);
    ProgressBar progress("eval", todo.size(), "cand", config.showProgress);
    std::vector<std::future<void>> pending;
    pending.reserve(todo.size());
    for (std::size_t index : todo) {
      pending.push_back(pool.submit([&, index] {
        EvalResult r = evaluateCandidate(candidates[index], services);
        results.append(r);
        fresh[index] = std::move(r);
        progress.advance();
      }));
    }
    try {
      for (auto& f : pending) f.get();  // rethrows harness errors (e.g. a full disk), not candidate failures
    } catch (const std::exception& e) {
      // The run stops, but its record says why rather than "running" forever.
      for (auto& f : pending) {
        if (f.valid()) f.wait();
      }
      runJson["status"] = "failed";
      runJson["error"] = e.what();
      runJson["finished"] = utcTimestamp();
      try {
        writeJsonFileAtomic(runJsonPath, runJson);
      } catch (const std::exception&) {
      }
      throw;
    }
    summary.evaluatedNow = todo.size();
  }

  // Report in candidate order, whichever run produced each result.
  std::map<std::string, const EvalResult*> previous;
  for (const auto& r : results.previousResults()) previous[r.key()] = &r;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const EvalResult* r = fresh[i] ? &*fresh[i] : nullptr;
    if (!r) {
      auto it = previous.find(candidates[i].key());
      if (it == previous.end()) continue;
      r = it->second;
    }
    summary.results.push_back(*r);
    ++summary.counts[r->verdict];
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();

  runJson["status"] = "finished";
  runJson["finished"] = utcTimestamp();
  runJson["candidates_total"] = candidates.size();
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [v, n] : summary.counts) counts[std::string(verdictName(v))] = n;
  runJson["verdict_counts"] = counts;
  if (backend == BackendKind::cuda && cuda && cuda->size() > 1) {
    // Which device judged which candidate (each result carries it too).
    nlohmann::json deviceOf = nlohmann::json::object();
    for (const auto& r : summary.results) {
      if (r.device) deviceOf[fmt::format("{} {} {}", r.model, r.problem, r.sample)] = *r.device;
    }
    runJson["cuda"]["device_of"] = std::move(deviceOf);
  }
  writeJsonFileAtomic(runJsonPath, runJson);
  return summary;
}

}  // namespace cuset
