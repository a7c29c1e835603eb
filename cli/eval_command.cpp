// `cuset eval`
#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <optional>

#include "commands.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_suite_cache.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/kernelbench/service_judge.hpp"
#include "cuset/evaluator/evaluation/eval_summary_format.hpp"
#include "cuset/evaluator/pipeline/run_environment.hpp"
#include "cuset/reports/report_writer.hpp"

namespace cuset::cli {

namespace {

// What the options write, alive as long as the command (the callback reads it).
struct EvalOptions {
  EvalConfig config;
  std::string backend = "auto", kernelbenchRoot, devices = "all", shard;
  std::string server, serverBackend = "cuda";  // `--server`: a running cuset serve judges (service_judge.hpp)
  std::filesystem::path serverTokenFile;
  std::optional<double> kernelbenchTolerance;  // --kernelbench-tolerance; else the checkout's eval.py
  std::uint64_t seed = 0;
  bool noCache = false, quiet = false, noTiming = false;
  std::size_t maxRows = 60;
  double timeoutSeconds = 10.0, memoryGiB = 0.0, slowSeconds = 0.0, referenceSeconds = 120.0, translateSeconds = 120.0, compileSeconds = 60.0;
};

// What is judged against what: the suite (or a KernelBench checkout) and the candidates.
void addInputOptions(CLI::App* eval, EvalOptions& o) {
  o.config.problemsDir = defaultProblemsDir();  // ./problems in a checkout, else the installed suite
  CLI::Option* problems = eval->add_option("--problems", o.config.problemsDir, "Problem suite folder")->capture_default_str();
  eval->add_option("--candidates", o.config.candidatesPath,
                   "JSONL file of candidates, a folder of .cu / .py files, or a KernelBench run folder (level_L_problem_P_sample_S_kernel.py)")
      ->required();
  eval->add_option(
          "--kernelbench", o.kernelbenchRoot,
          "KernelBench checkout: the problems a KernelBench run folder names are imported from it on first use (cached) instead of --problems")
      ->check(CLI::ExistingDirectory)
      ->excludes(problems);
}

// A running `cuset serve` judges instead of this machine (docs/serve.md "cuset eval --server").
void addServerOptions(CLI::App* eval, EvalOptions& o) {
  eval->add_option("--server", o.server,
                   "http://host:port of a running cuset serve: it judges every candidate (KernelBench solutions), this run folder records them; "
                   "--jobs tasks in flight");
  eval->add_option("--server-token-file", o.serverTokenFile, "--server: the bearer token (the file's first)")->check(CLI::ExistingFile);
  eval->add_option("--server-backend", o.serverBackend, "--server: cuda (the server's backend), sim (a CPU worker's verdict) or gpu (timings)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cuda", "sim", "gpu"}));
}

// KernelBench's own check and files beside CuSeT's (docs/kernelbench.md).
void addKernelBenchOptions(CLI::App* eval, EvalOptions& o) {
  eval->add_option("--kernelbench-check", o.config.kernelbench.check,
                   "KernelBench's own check beside CuSeT's (kernelbench_correct): auto (KernelBench solutions and problems), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  eval->add_option(
          "--precision", o.config.kernelbench.precision,
          "KernelBench's precision option: fp32 as the problems are; fp16 or bf16 cast every float32 input, weight and output (tolerance 1e-2)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  eval->add_option("--kernelbench-gpu", o.config.kernelbench.gpu,
                   "The GPU class whose KernelBench verdict kernelbench_correct predicts (its default numerics: TF32 convolutions from "
                   "ampere on): auto (the target architecture's), none, volta, turing, ampere, ada, hopper, blackwell")
      ->check(CLI::IsMember({"auto", "none", "volta", "turing", "ampere", "ada", "hopper", "blackwell"}))
      ->capture_default_str();
  eval->add_option("--kernelbench-tolerance", o.kernelbenchTolerance,
                   "KernelBench's float32 tolerance (atol = rtol): 1e-4 today, 1e-2 in KernelBench v0/v0.1 (default: read from "
                   "--kernelbench's eval.py, else 1e-4)")
      ->check(CLI::PositiveNumber);
  eval->add_option("--backend-lang", o.config.kernelbench.backendLang,
                   "KernelBench's backend option, the language its solutions are written in: auto (triton where a solution defines "
                   "a @triton.jit kernel, cuda otherwise), cuda or triton; picks the form and the static checker's rules")
      ->check(CLI::IsMember({"auto", "cuda", "triton"}))
      ->capture_default_str();
  eval->add_option("--kernelbench-static", o.config.kernelbench.staticChecks,
                   "KernelBench's static checker: record (findings in results.jsonl) or strict (its strict findings are invalid_submission)")
      ->check(CLI::IsMember({"record", "strict"}))
      ->capture_default_str();
  eval->add_option("--kernelbench-baseline", o.config.kernelbench.baseline,
                   "KernelBench's baseline timing JSON ({\"level1\": {\"19_ReLU.py\": {\"mean\": ms}}}): writes analysis_results.json (fast_p, "
                   "geometric-mean speedup)")
      ->check(CLI::ExistingFile);
  eval->add_option("--pass-at-k", o.config.kernelbench.passAtK, "k values of pass_at_k_results.json (KernelBench's pass@k file)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
}

// Where candidates run and how they are timed.
void addBackendOptions(CLI::App* eval, EvalOptions& o) {
  eval->add_option("--backend", o.backend,
                   "auto (cuda when a GPU and driver are usable, else sim), compile-only (NVRTC verdicts), sim (run on the CPU "
                   "simulator, full correctness checks) or cuda (run and time on the GPU)")
      ->check(CLI::IsMember({"auto", "compile-only", "sim", "cuda"}))
      ->capture_default_str();
  eval->add_option("--sizes", o.config.sizeSet, "Size set to run (default: small on sim, full on cuda)");
  eval->add_option("--large-sizes-mib", o.config.largeSizesMib,
                   "sim: a KernelBench problem's own sizes with the batch cut to fit this many MiB, where a kernel that passed at "
                   "small runs one more trial (0: off)")
      ->capture_default_str();
  eval->add_option("--race-check", o.config.raceCheck,
                   "sim: race-check one trial of every kernel (all: correct ones too, which finds lost updates the simulator's order "
                   "hides) or only of those with wrong outputs (failures: one host build fewer per correct kernel)")
      ->check(CLI::IsMember({"all", "failures"}))
      ->capture_default_str();
  eval->add_flag("--kernelbench-timing", o.config.cuda.kernelbenchTiming,
                 "cuda: also report KernelBench's own cuda_event measurement of the same timed iterations (candidate and reference: "
                 "its mean, std, min, max, speedup) beside CuSeT's, and their ratio");
  eval->add_flag("--retime-reference", o.config.cuda.retimeReference,
                 "cuda: time the reference with every candidate, replacing the timing this machine keeps per (problem, GPU, driver, "
                 "LibTorch) in the cache");
  eval->add_option("--timer", o.config.cuda.timer, "cuda: cupti (GPU busy time of every kernel) or events (CUDA events)")
      ->check(CLI::IsMember({"cupti", "events"}))
      ->capture_default_str();
  eval->add_flag("--no-timing", o.noTiming, "cuda: judge correctness only");
  eval->add_option("--max-timing-seconds", o.config.cuda.maxSeconds, "cuda: time cap per candidate (stop even if still noisy)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  eval->add_option("--min-timing-samples", o.config.cuda.minSamples, "cuda: timed runs at least, before the noise decides when to stop")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
}

// The run folder, its parallelism, sharding, seed, cache and output.
void addRunOptions(CLI::App* eval, EvalOptions& o) {
  eval->add_option("--out", o.config.outDir, "Run folder (default: runs/<timestamp>-<backend>)");
  eval->add_option("--arch", o.config.arch, "Target architecture: sm_XX (cubin) or compute_XX (PTX); default: the GPU's own on cuda, else sm_90");
  eval->add_option("--jobs,-j", o.config.jobs, "Parallel compiles (0 = one per core)")->capture_default_str();
  eval->add_flag("--resume", o.config.resume, "Continue an interrupted run in --out, skipping finished candidates");
  eval->add_option("--devices", o.devices, "cuda: all (every visible GPU, one worker each) or ordinals 0,1,...")
      ->check([](const std::string& v) {
        if (v == "all") return std::string();
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (!std::isdigit(static_cast<unsigned char>(v[i])) && !(v[i] == ',' && i > 0 && i + 1 < v.size()))
            return std::string("expected all or 0,1,...");
        }
        return std::string();
      })
      ->capture_default_str();
  eval->add_option("--shard", o.shard,
                   "Judge shard I of N (I/N, 1-based): all samples of a problem in one shard; needs --seed; `cuset merge` joins them")
      ->check([](const std::string& v) { return parseShard(v) ? std::string() : std::string("expected I/N with 1 <= I <= N, e.g. 2/8"); });
  eval->add_option("--seed", o.seed, "Secret per-run input seed (default: random, recorded in run.json)");
  eval->add_option("--cache-dir", o.config.cacheDir, "Cache folder for compiled kernels (default: $XDG_CACHE_HOME/cuset)");
  eval->add_flag("--no-cache", o.noCache, "Do not read or write the compile cache");
  eval->add_option("--model", o.config.defaultModel, "Model name for candidates that give none (default: the candidates' file or folder name)");
  eval->add_option("--max-rows", o.maxRows, "Print one row per candidate up to this many candidates")->capture_default_str();
  eval->add_flag("--quiet,-q", o.quiet, "No progress bar");
}

// Trials and every time and memory limit.
void addLimitOptions(CLI::App* eval, EvalOptions& o) {
  eval->add_option("--trials", o.config.trials, "Correctness trials with fresh inputs (plus one determinism rerun)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  eval->add_option("--timeout", o.timeoutSeconds, "Wall-time limit in seconds for one trial of one candidate")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  eval->add_option("--slow-limit", o.slowSeconds,
                   "sim: seconds a trial still finishing blocks at --timeout may run before it is `unsupported` as too slow to simulate "
                   "(a trial that finishes no block is a `timeout`; default: 4 x --timeout)")
      ->check(CLI::Range(0.0, 36000.0));
  eval->add_option("--reference-timeout", o.referenceSeconds,
                   "Wall-time limit in seconds for each problem's reference in the check at the start (its candidates are unsupported past it)")
      ->check(CLI::Range(1.0, 36000.0))
      ->capture_default_str();
  eval->add_option("--translate-timeout", o.translateSeconds,
                   "Wall-time limit in seconds for each run of the KernelBench translator's helper (docs/kernelbench-solutions.md)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  eval->add_flag("--include-defective", o.config.includeDefective,
                 "Count problems flagged defective (KernelBench's degenerate or stochastic references) in the report's metrics");
  eval->add_option("--compile-timeout", o.compileSeconds, "Wall-time limit in seconds for one NVRTC compile (a helper process is killed past it)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  eval->add_option("--sim-threads", o.config.sandbox.hostThreads, "Host threads per simulated launch (blocks run in parallel)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  eval->add_option("--memory-limit", o.memoryGiB,
                   "Address-space limit of each sandbox worker, GiB (default: 3/4 of the machine's memory over --jobs, 1 to 16 GiB)")
      ->check(CLI::Range(0.5, 4096.0));
}

// The options as the run's EvalConfig (after parsing, before the run).
void finishConfig(EvalOptions& o, const CommandContext& context) {
  o.config.backend = *parseBackend(o.backend);
  if (!o.shard.empty()) o.config.shard = parseShard(o.shard);
  o.config.devices.clear();
  if (o.devices != "all") {
    std::size_t from = 0;
    while (from <= o.devices.size()) {
      const std::size_t comma = std::min(o.devices.find(',', from), o.devices.size());
      o.config.devices.push_back(std::stoi(o.devices.substr(from, comma - from)));
      from = comma + 1;
    }
  }
  o.config.cuda.time = !o.noTiming;
  o.config.sandbox.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeoutSeconds * 1000));
  o.config.sandbox.slowLimit = std::chrono::milliseconds(static_cast<long long>(o.slowSeconds * 1000));
  o.config.compileTimeout = std::chrono::milliseconds(static_cast<long long>(o.compileSeconds * 1000));
  o.config.referenceTimeout = std::chrono::milliseconds(static_cast<long long>(o.referenceSeconds * 1000));
  o.config.translateTimeout = std::chrono::milliseconds(static_cast<long long>(o.translateSeconds * 1000));
  if (o.memoryGiB > 0) o.config.sandbox.memoryBytes = static_cast<std::size_t>(o.memoryGiB * static_cast<double>(std::size_t{1} << 30));
  if (o.seed != 0) o.config.seed = o.seed;
  o.config.useCache = !o.noCache;
  o.config.showProgress = !o.quiet;
  o.config.commandLine = context.argv;
  // Absolute: the sandbox's Landlock rules and the helpers started elsewhere need the folder itself.
  if (!o.config.cacheDir.empty()) o.config.cacheDir = std::filesystem::absolute(o.config.cacheDir);
  if (!o.server.empty()) {
    o.config.remote =
        makeServiceJudge({.url = o.server,
                          .tokenFile = o.serverTokenFile,
                          .backend = o.serverBackend,
                          .trials = o.config.trials,
                          .runIdentity = o.config.outDir.empty() ? utcTimestamp() : std::filesystem::absolute(o.config.outDir).string()});
  }
  if (o.kernelbenchTolerance) {
    o.config.kernelbench.float32Tolerance = *o.kernelbenchTolerance;
  } else if (!o.kernelbenchRoot.empty()) {
    if (auto tolerance = kernelBenchFloat32Tolerance(o.kernelbenchRoot)) o.config.kernelbench.float32Tolerance = *tolerance;
  }
  if (!o.kernelbenchRoot.empty()) {
    o.config.problemsDir = kernelBenchSuiteOnFirstUse({.root = o.kernelbenchRoot,
                                                       .cacheRoot = o.config.cacheDir.empty() ? defaultCacheDir() : o.config.cacheDir,
                                                       .needed = kernelBenchRunFileProblems(o.config.candidatesPath),
                                                       .progress = o.config.showProgress});
  }
}

void addEvalOptions(CLI::App* eval, EvalOptions& o) {
  addInputOptions(eval, o);
  addKernelBenchOptions(eval, o);
  addBackendOptions(eval, o);
  addRunOptions(eval, o);
  addLimitOptions(eval, o);
  addServerOptions(eval, o);
}

}  // namespace

EvalConfig evalConfigFromArguments(const std::vector<std::string>& args) {
  CLI::App app("cuset eval", "eval");
  EvalOptions options;
  addEvalOptions(&app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  app.parse(reversed);
  CommandContext context;
  context.argv = {"cuset", "eval"};
  context.argv.insert(context.argv.end(), args.begin(), args.end());
  finishConfig(options, context);
  return options.config;
}

void registerEvalCommand(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* eval = app.add_subcommand("eval", "Compile and judge candidate kernels, writing RUN_DIR/results.jsonl");
  addEvalOptions(eval, *options);
  eval->callback([options, &context] {
    finishConfig(*options, context);
    const EvalRunSummary summary = runEvaluation(options->config);
    fmt::print("{}", formatEvalSummary(summary, options->maxRows));
    for (const auto& file : summary.kernelbenchFiles) fmt::print("kernelbench: {}\n", file.string());
    // The run's reports come with it; `cuset report` rewrites them later (e.g. with --compare).
    writeRunReports(ReportOptions{.runDir = summary.runDir});
    fmt::print("report: {}\n", (summary.runDir / "report.html").string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
