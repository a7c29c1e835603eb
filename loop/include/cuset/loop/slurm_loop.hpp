#pragma once
// `cuset loop --slurm`: the loop's parts as Slurm jobs. The shared part (data, the warm start) is one
// job; every (objective, seed) run is a task of a job array that starts when the shared job succeeded
// (`afterok`); the comparison is a last job that runs however the array ends (`afterany`). Each job is
// `cuset loop ... --only PART`, resumable and marker-checked like any loop, so a rerun submits only the
// parts with unfinished stages.
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/loop/loop_config.hpp"

namespace cuset {

struct SlurmLoopOptions {
  std::vector<std::string> loopArgs;  // `cuset loop` options every job repeats (--config, --out, --model), paths absolute
  std::string partition;
  int gpusPerTask = 0;            // for the shared and the run jobs (training, generation, a cuda eval); not the report
  std::string timeLimit;          // sbatch --time
  bool dryRun = false;            // print the scripts and commands; write and submit nothing
  std::filesystem::path cuset;    // the binary the jobs run (default: this one)
  std::filesystem::path workDir;  // the jobs' working directory (default: the current one)
};

struct SlurmLoopSubmission {
  bool shared = false;                        // the shared job was (or would be) submitted
  std::vector<std::string> runs;              // runs submitted as array tasks
  std::string sharedJob, runsJob, reportJob;  // job ids; empty when not submitted
  std::string text;                           // what was (or, with --dry-run, would be) written and run
  bool finished = false;                      // every stage done and the comparison written: nothing submitted
};

SlurmLoopSubmission submitSlurmLoop(const LoopConfig& config, const SlurmLoopOptions& options);

}  // namespace cuset
