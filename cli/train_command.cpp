// `cuset train`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/trainer/training.hpp"
#include <cstdint>

namespace cuset::cli {

void registerTrainCommand(CLI::App& app, CommandContext& context) {
  struct Config {
    std::string config;
    std::string out;
    std::int64_t maxSteps = 0;
    bool resume = false;
    bool quiet = false;
    double distTimeout = 0;
  };
  auto c = std::make_shared<Config>();
  CLI::App* cmd = app.add_subcommand("train", "Fine-tune a Llama/Qwen2-family model (objectives: sft, cuset and ablations, dft, rho1, profit)");
  cmd->add_option("--config", c->config, "Training YAML (see configs/tiny.yaml and docs/cli-train.md)")->required();
  cmd->add_option("--out", c->out, "Run folder (default: runs/train-<config name>)");
  cmd->add_option("--max-steps", c->maxSteps, "Stop after this many optimizer steps (overrides steps.max)");
  cmd->add_flag("--resume", c->resume, "Continue from the run folder's latest checkpoint");
  cmd->add_flag("--quiet,-q", c->quiet, "No progress bar");
  cmd->add_option("--dist-timeout", c->distTimeout,
                  "Data-parallel runs: seconds a rank waits for the others (rendezvous, each collective) before the job stops with an "
                  "error (default: $CUSET_DIST_TIMEOUT, else 300)")
      ->check(CLI::Range(1.0, 86400.0));
  cmd->callback([c, &context] {
    const TrainConfig config = TrainConfig::load(c->config);
    TrainRunOptions options;
    options.outDir = c->out.empty() ? std::filesystem::path("runs") / ("train-" + std::filesystem::path(c->config).stem().string())
                                    : std::filesystem::path(c->out);
    if (c->maxSteps > 0) options.maxSteps = c->maxSteps;
    options.resume = c->resume;
    options.showProgress = !c->quiet;
    // Started by `cuset launch`, torchrun or srun with torchrun's variables: one rank of a data-parallel run.
    options.distributed = readDistributedEnv();
    if (c->distTimeout > 0) options.distributed.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(c->distTimeout * 1000));
    const TrainRunSummary s = runTraining(config, options);
    context.exitCode = 0;
    if (!options.distributed.leader()) return;  // rank 0 speaks for the run
    fmt::print("trained steps {}..{}: loss {:.4f} -> {:.4f}\nmodel: {}\nmetrics: {}\n", s.startStep, s.endStep, s.firstLoss, s.lastLoss,
               s.finalCheckpoint.string(), (options.outDir / "metrics.jsonl").string());
  });
}

}  // namespace cuset::cli
