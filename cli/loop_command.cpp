// `cuset loop`
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/loop/loop_runner.hpp"
#include "cuset/loop/slurm_loop.hpp"

namespace cuset::cli {

void registerLoopCommand(CLI::App& app, CommandContext& context) {
  struct Options {
    std::string config;
    std::string out;
    std::string model;
    bool quiet = false;
    bool reportOnly = false;
    std::string only;
    bool slurm = false;
    std::string partition;
    int gpusPerTask = 0;
    std::string timeLimit;
    bool dryRun = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("loop", "Data -> train each objective and seed -> generate -> evaluate -> one comparison report (resumable)");
  cmd->add_option("--config", o->config, "Loop YAML (see configs/loop-tiny.yaml and docs/cli-loop.md)")->required();
  cmd->add_option("--out", o->out, "Loop folder (default: the config's `out`, else runs/<config name>)");
  cmd->add_option("--model", o->model, "HF model folder to fine-tune (replaces train.model; e.g. for configs/loop-gpu.yaml)");
  cmd->add_flag("--report-only", o->reportOnly, "Rebuild the comparison report from the finished stages; run nothing");
  cmd->add_flag("--quiet,-q", o->quiet, "No progress bars");
  cmd->add_option("--only", o->only, "Run one part and write no comparison: `shared` (data, warm start) or one run (e.g. sft-s1)");
  auto* slurm = cmd->add_flag("--slurm", o->slurm, "Submit the loop as Slurm jobs: shared part, a job array of runs, the comparison");
  cmd->add_option("--partition", o->partition, "With --slurm: sbatch --partition")->needs(slurm);
  cmd->add_option("--gpus-per-task", o->gpusPerTask, "With --slurm: GPUs for the shared and run jobs")->needs(slurm)->check(CLI::Range(0, 64));
  cmd->add_option("--time", o->timeLimit, "With --slurm: sbatch --time limit of each job, e.g. 04:00:00")->needs(slurm);
  cmd->add_flag("--dry-run", o->dryRun, "With --slurm: print the job scripts and sbatch commands; write and submit nothing")->needs(slurm);
  cmd->callback([o, &context] {
    LoopConfig config = LoopConfig::load(o->config);
    if (!o->out.empty()) config.outDir = o->out;
    if (!o->model.empty()) config.overrideModelPath(o->model);
    if (o->slurm) {
      if (o->reportOnly || !o->only.empty()) throw cuset::Error("--slurm submits every part itself; it takes neither --only nor --report-only");
      SlurmLoopOptions so;
      so.loopArgs = {"--config", std::filesystem::absolute(o->config).string(), "--out", std::filesystem::absolute(config.outDir).string()};
      if (!o->model.empty()) so.loopArgs.insert(so.loopArgs.end(), {"--model", std::filesystem::absolute(o->model).string()});
      so.partition = o->partition;
      so.gpusPerTask = o->gpusPerTask;
      so.timeLimit = o->timeLimit;
      so.dryRun = o->dryRun;
      const SlurmLoopSubmission s = submitSlurmLoop(config, so);
      if (o->dryRun) fmt::print("{}", s.text);
      if (s.finished) fmt::print("every stage has finished and the comparison is written: nothing to submit\n");
      if (!s.sharedJob.empty()) fmt::print("shared job {} (data, warm start)\n", s.sharedJob);
      if (!s.runsJob.empty()) fmt::print("run array {}: {}\n", s.runsJob, fmt::join(s.runs, " "));
      if (!s.reportJob.empty()) fmt::print("report job {} -> {}\n", s.reportJob, (config.outDir / "comparison.html").string());
      context.exitCode = 0;
      return;
    }
    const LoopSummary s = runLoop(config, LoopRunOptions{.showProgress = !o->quiet, .reportOnly = o->reportOnly, .only = o->only});
    if (!o->only.empty()) {
      fmt::print("{}: {} stages run, {} already done, {:.0f} s\n", o->only, s.stagesRun, s.stagesSkipped, s.seconds);
      context.exitCode = 0;
      return;
    }
    fmt::print("{}\n{} stages run, {} already done, {:.0f} s\nreport: {}\n", s.table, s.stagesRun, s.stagesSkipped, s.seconds, s.reportHtml.string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
