// `cuset eval`
#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "commands.hpp"
#include "cuset/evaluator/importer/kernelbench_suite_cache.hpp"
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"
#include "cuset/evaluator/pipeline/eval_summary_format.hpp"
#include "cuset/reports/report_writer.hpp"

namespace cuset::cli {

void registerEvalCommand(CLI::App& app, CommandContext& context) {
  auto config = std::make_shared<EvalConfig>();
  auto backend = std::make_shared<std::string>("auto");
  auto seed = std::make_shared<std::uint64_t>(0);
  auto noCache = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto maxRows = std::make_shared<std::size_t>(60);

  CLI::App* eval = app.add_subcommand("eval", "Compile and judge candidate kernels, writing RUN_DIR/results.jsonl");
  CLI::Option* problems = eval->add_option("--problems", config->problemsDir, "Problem suite folder")->capture_default_str();
  eval->add_option("--candidates", config->candidatesPath,
                   "JSONL file of candidates, a folder of .cu / .py files, or a KernelBench run folder (level_L_problem_P_sample_S_kernel.py)")
      ->required();
  auto kernelbenchRoot = std::make_shared<std::string>();
  eval->add_option(
          "--kernelbench", *kernelbenchRoot,
          "KernelBench checkout: the problems a KernelBench run folder names are imported from it on first use (cached) instead of --problems")
      ->check(CLI::ExistingDirectory)
      ->excludes(problems);
  eval->add_option("--kernelbench-check", config->kernelbench.check,
                   "KernelBench's own check beside CuSeT's (kernelbench_correct): auto (KernelBench solutions and problems), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  eval->add_option(
          "--precision", config->kernelbench.precision,
          "KernelBench's precision option: fp32 as the problems are; fp16 or bf16 cast every float32 input, weight and output (tolerance 1e-2)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  eval->add_option("--kernelbench-static", config->kernelbench.staticChecks,
                   "KernelBench's static checker: record (findings in results.jsonl) or strict (its strict findings are invalid_submission)")
      ->check(CLI::IsMember({"record", "strict"}))
      ->capture_default_str();
  eval->add_option("--kernelbench-baseline", config->kernelbench.baseline,
                   "KernelBench's baseline timing JSON ({\"level1\": {\"19_ReLU.py\": {\"mean\": ms}}}): writes analysis_results.json (fast_p, "
                   "geometric-mean speedup)")
      ->check(CLI::ExistingFile);
  eval->add_option("--pass-at-k", config->kernelbench.passAtK, "k values of pass_at_k_results.json (KernelBench's pass@k file)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  eval->add_option("--backend", *backend,
                   "auto (cuda when a GPU and driver are usable, else sim), compile-only (NVRTC verdicts), sim (run on the CPU "
                   "simulator, full correctness checks) or cuda (run and time on the GPU)")
      ->check(CLI::IsMember({"auto", "compile-only", "sim", "cuda"}))
      ->capture_default_str();
  eval->add_option("--sizes", config->sizeSet, "Size set to run (default: small on sim, full on cuda)");
  eval->add_option("--timer", config->cuda.timer, "cuda: cupti (GPU busy time of every kernel) or events (CUDA events)")
      ->check(CLI::IsMember({"cupti", "events"}))
      ->capture_default_str();
  auto noTiming = std::make_shared<bool>(false);
  eval->add_flag("--no-timing", *noTiming, "cuda: judge correctness only");
  eval->add_option("--max-timing-seconds", config->cuda.maxSeconds, "cuda: time cap per candidate (stop even if still noisy)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  eval->add_option("--out", config->outDir, "Run folder (default: runs/<timestamp>-<backend>)");
  eval->add_option("--arch", config->arch, "Target architecture: sm_XX (cubin) or compute_XX (PTX); default: the GPU's own on cuda, else sm_90");
  eval->add_option("--jobs,-j", config->jobs, "Parallel compiles (0 = one per core)")->capture_default_str();
  eval->add_flag("--resume", config->resume, "Continue an interrupted run in --out, skipping finished candidates");
  auto devices = std::make_shared<std::string>("all");
  eval->add_option("--devices", *devices, "cuda: all (every visible GPU, one worker each) or ordinals 0,1,...")
      ->check([](const std::string& v) {
        if (v == "all") return std::string();
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (!std::isdigit(static_cast<unsigned char>(v[i])) && !(v[i] == ',' && i > 0 && i + 1 < v.size()))
            return std::string("expected all or 0,1,...");
        }
        return std::string();
      })
      ->capture_default_str();
  auto shard = std::make_shared<std::string>();
  eval->add_option("--shard", *shard,
                   "Judge shard I of N (I/N, 1-based): all samples of a problem in one shard; needs --seed; `cuset merge` joins them")
      ->check([](const std::string& v) { return parseShard(v) ? std::string() : std::string("expected I/N with 1 <= I <= N, e.g. 2/8"); });
  eval->add_option("--seed", *seed, "Secret per-run input seed (default: random, recorded in run.json)");
  eval->add_option("--cache-dir", config->cacheDir, "Cache folder for compiled kernels (default: $XDG_CACHE_HOME/cuset)");
  eval->add_flag("--no-cache", *noCache, "Do not read or write the compile cache");
  eval->add_option("--model", config->defaultModel, "Model name for candidates that give none (default: the candidates' file or folder name)");
  eval->add_option("--max-rows", *maxRows, "Print one row per candidate up to this many candidates")->capture_default_str();
  eval->add_flag("--quiet,-q", *quiet, "No progress bar");
  auto timeoutSeconds = std::make_shared<double>(10.0);
  auto memoryGiB = std::make_shared<double>(0.0);
  eval->add_option("--trials", config->trials, "Correctness trials with fresh inputs (plus one determinism rerun)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  eval->add_option("--timeout", *timeoutSeconds, "Wall-time limit in seconds for one trial of one candidate")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  auto slowSeconds = std::make_shared<double>(0.0);
  eval->add_option("--slow-limit", *slowSeconds,
                   "sim: seconds a trial still finishing blocks at --timeout may run before it is `unsupported` as too slow to simulate "
                   "(a trial that finishes no block is a `timeout`; default: 4 x --timeout)")
      ->check(CLI::Range(0.0, 36000.0));
  auto referenceSeconds = std::make_shared<double>(120.0);
  eval->add_option("--reference-timeout", *referenceSeconds,
                   "Wall-time limit in seconds for each problem's reference in the check at the start (its candidates are unsupported past it)")
      ->check(CLI::Range(1.0, 36000.0))
      ->capture_default_str();
  auto translateSeconds = std::make_shared<double>(120.0);
  eval->add_option("--translate-timeout", *translateSeconds,
                   "Wall-time limit in seconds for each run of the KernelBench translator's helper (docs/kernelbench-solutions.md)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  eval->add_flag("--include-defective", config->includeDefective,
                 "Count problems flagged defective (KernelBench's degenerate or stochastic references) in the report's metrics");
  auto compileSeconds = std::make_shared<double>(60.0);
  eval->add_option("--compile-timeout", *compileSeconds, "Wall-time limit in seconds for one NVRTC compile (a helper process is killed past it)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  eval->add_option("--sim-threads", config->sandbox.hostThreads, "Host threads per simulated launch (blocks run in parallel)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  eval->add_option("--memory-limit", *memoryGiB,
                   "Address-space limit of each sandbox worker, GiB (default: 3/4 of the machine's memory over --jobs, 1 to 16 GiB)")
      ->check(CLI::Range(0.5, 4096.0));

  eval->callback([=, &context] {
    config->backend = *parseBackend(*backend);
    if (!shard->empty()) config->shard = parseShard(*shard);
    config->devices.clear();
    if (*devices != "all") {
      std::size_t from = 0;
      while (from <= devices->size()) {
        const std::size_t comma = std::min(devices->find(',', from), devices->size());
        config->devices.push_back(std::stoi(devices->substr(from, comma - from)));
        from = comma + 1;
      }
    }
    config->cuda.time = !*noTiming;
    config->sandbox.timeout = std::chrono::milliseconds(static_cast<long long>(*timeoutSeconds * 1000));
    config->sandbox.slowLimit = std::chrono::milliseconds(static_cast<long long>(*slowSeconds * 1000));
    config->compileTimeout = std::chrono::milliseconds(static_cast<long long>(*compileSeconds * 1000));
    config->referenceTimeout = std::chrono::milliseconds(static_cast<long long>(*referenceSeconds * 1000));
    config->translateTimeout = std::chrono::milliseconds(static_cast<long long>(*translateSeconds * 1000));
    if (*memoryGiB > 0) config->sandbox.memoryBytes = static_cast<std::size_t>(*memoryGiB * static_cast<double>(std::size_t{1} << 30));
    if (*seed != 0) config->seed = *seed;
    config->useCache = !*noCache;
    config->showProgress = !*quiet;
    config->commandLine = context.argv;
    if (!kernelbenchRoot->empty()) {
      config->problemsDir = kernelBenchSuiteOnFirstUse({.root = *kernelbenchRoot,
                                                        .cacheRoot = config->cacheDir.empty() ? defaultCacheDir() : config->cacheDir,
                                                        .needed = kernelBenchRunFileProblems(config->candidatesPath),
                                                        .progress = config->showProgress});
    }
    const EvalRunSummary summary = runEvaluation(*config);
    fmt::print("{}", formatEvalSummary(summary, *maxRows));
    for (const auto& file : summary.kernelbenchFiles) fmt::print("kernelbench: {}\n", file.string());
    // The run's reports come with it; `cuset report` rewrites them later (e.g. with --compare).
    writeRunReports(ReportOptions{.runDir = summary.runDir});
    fmt::print("report: {}\n", (summary.runDir / "report.html").string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
