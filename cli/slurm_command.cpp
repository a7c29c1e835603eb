// `cuset slurm eval [cuset eval options] --out RUN_DIR --shards N [--partition P] [--gpus-per-task G]
// [--time T] [--seed S] [--dry-run]`
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "cuset/loop/slurm_eval.hpp"
#include <cstdint>

namespace cuset::cli {

void registerSlurmCommand(CLI::App& app, CommandContext& context) {
  CLI::App* slurm = app.add_subcommand("slurm", "Run work on a Slurm cluster");
  slurm->require_subcommand(1);
  auto o = std::make_shared<SlurmEvalOptions>();
  auto seed = std::make_shared<std::uint64_t>(0);
  CLI::App* eval = slurm->add_subcommand("eval", "A sharded `cuset eval` as a job array plus a merge-and-report job (docs/scale-out.md)");
  eval->allow_extras();  // everything else is `cuset eval`'s, passed to every shard as given
  eval->add_option("--out", o->outDir, "Run folder: shards/<i>/, merged/ (the merged run and its reports), slurm/")->required();
  eval->add_option("--shards", o->shards, "Shards, one array task each")->required();
  eval->add_option("--partition", o->partition, "sbatch --partition");
  eval->add_option("--gpus-per-task", o->gpusPerTask, "sbatch --gpus-per-task (the cuda backend)");
  eval->add_option("--time", o->timeLimit, "sbatch --time per shard, e.g. 02:00:00");
  eval->add_option("--seed", *seed, "Input seed for every shard (default: random, kept in slurm/plan.json)");
  eval->add_flag("--dry-run", o->dryRun, "Print the job scripts and sbatch commands; write and submit nothing");
  eval->callback([=, &context] {
    o->evalArgs = eval->remaining();
    if (*seed != 0) o->seed = *seed;
    const SlurmSubmission s = submitSlurmEval(*o);
    if (o->dryRun) {
      fmt::print("{}", s.text);
    } else if (s.alreadyMerged) {
      fmt::print("every shard has finished and {} is merged: nothing to submit\n", (o->outDir / "merged").string());
    } else {
      if (!s.arrayJob.empty()) fmt::print("submitted shards {} as array job {}\n", fmt::join(s.shards, ","), s.arrayJob);
      fmt::print("submitted merge-and-report job {} -> {}\n", s.mergeJob, (o->outDir / "merged" / "report.html").string());
    }
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
