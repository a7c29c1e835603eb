// `cuset eval`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/evaluator/console_format.hpp"
#include "cuset/evaluator/eval_pipeline.hpp"

namespace cuset::cli {

void registerEvalCommand(CLI::App& app, CommandContext& context) {
  auto config = std::make_shared<EvalConfig>();
  auto backend = std::make_shared<std::string>("compile-only");
  auto seed = std::make_shared<std::uint64_t>(0);
  auto noCache = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto maxRows = std::make_shared<std::size_t>(60);

  CLI::App* eval = app.add_subcommand("eval", "Compile and judge candidate kernels, writing RUN_DIR/results.jsonl");
  eval->add_option("--problems", config->problemsDir, "Problem suite folder")->capture_default_str();
  eval->add_option("--candidates", config->candidatesPath, "JSONL file of candidates, or a folder of .cu files")->required();
  eval->add_option("--backend", *backend, "Backend")->check(CLI::IsMember({"compile-only"}))->capture_default_str();
  eval->add_option("--out", config->outDir, "Run folder (default: runs/<timestamp>-<backend>)");
  eval->add_option("--arch", config->arch, "Target architecture: sm_XX (cubin) or compute_XX (PTX)")->capture_default_str();
  eval->add_option("--jobs,-j", config->jobs, "Parallel compiles (0 = one per core)")->capture_default_str();
  eval->add_flag("--resume", config->resume, "Continue an interrupted run in --out, skipping finished candidates");
  eval->add_option("--seed", *seed, "Secret per-run input seed (default: random, recorded in run.json)");
  eval->add_option("--cache-dir", config->cacheDir, "Compile cache folder (default: $XDG_CACHE_HOME/cuset/nvrtc)");
  eval->add_flag("--no-cache", *noCache, "Do not read or write the compile cache");
  eval->add_option("--model", config->defaultModel, "Model name for candidates that give none (default: the candidates' file or folder name)");
  eval->add_option("--max-rows", *maxRows, "Print one row per candidate up to this many candidates")->capture_default_str();
  eval->add_flag("--quiet,-q", *quiet, "No progress bar");

  eval->callback([=, &context] {
    config->backend = BackendKind::compileOnly;  // the only member --backend accepts for now
    if (*seed != 0) config->seed = *seed;
    config->useCache = !*noCache;
    config->showProgress = !*quiet;
    config->commandLine = context.argv;
    const EvalRunSummary summary = runEvaluation(*config);
    fmt::print("{}", formatEvalSummary(summary, *maxRows));
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
