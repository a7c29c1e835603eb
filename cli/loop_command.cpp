// `cuset loop`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/loop/loop_runner.hpp"

namespace cuset::cli {

void registerLoopCommand(CLI::App& app, CommandContext& context) {
  struct Options {
    std::string config;
    std::string out;
    std::string model;
    bool quiet = false;
    bool reportOnly = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("loop", "Data -> train each objective and seed -> generate -> evaluate -> one comparison report (resumable)");
  cmd->add_option("--config", o->config, "Loop YAML (see configs/loop-tiny.yaml and docs/cli-loop.md)")->required();
  cmd->add_option("--out", o->out, "Loop folder (default: the config's `out`, else runs/<config name>)");
  cmd->add_option("--model", o->model, "HF model folder to fine-tune (replaces train.model; e.g. for configs/loop-gpu.yaml)");
  cmd->add_flag("--report-only", o->reportOnly, "Rebuild the comparison report from the finished stages; run nothing");
  cmd->add_flag("--quiet,-q", o->quiet, "No progress bars");
  cmd->callback([o, &context] {
    LoopConfig config = LoopConfig::load(o->config);
    if (!o->out.empty()) config.outDir = o->out;
    if (!o->model.empty()) config.overrideModelPath(o->model);
    const LoopSummary s = runLoop(config, LoopRunOptions{.showProgress = !o->quiet, .reportOnly = o->reportOnly});
    fmt::print("{}\n{} stages run, {} already done, {:.0f} s\nreport: {}\n", s.table, s.stagesRun, s.stagesSkipped, s.seconds, s.reportHtml.string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
