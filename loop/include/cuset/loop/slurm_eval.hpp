#pragma once
// `cuset slurm eval`: a sharded `cuset eval` as a Slurm job array (one shard per task, each
// `cuset eval --shard I/N --seed S --resume`) plus a merge-and-report job that depends on it
// (`afterany`). The plan (shards, seed, eval arguments) is kept in RUN_DIR/slurm/plan.json, so a rerun
// resubmits only the shards that have not finished, and refuses other arguments.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cuset {

struct SlurmEvalOptions {
  std::vector<std::string> evalArgs;  // `cuset eval` options as given (--candidates, --problems, --backend, ...)
  std::filesystem::path outDir;       // RUN_DIR: shards/<i>/, merged/, slurm/
  std::size_t shards = 1;
  std::optional<std::uint64_t> seed;  // default: the plan's, else a fresh random one
  std::string partition;
  int gpusPerTask = 0;
  std::string timeLimit;          // sbatch --time, e.g. 02:00:00
  bool dryRun = false;            // print the scripts and commands; write and submit nothing
  std::filesystem::path cuset;    // the binary the jobs run (default: this one)
  std::filesystem::path workDir;  // the jobs' working directory (default: the current one)
};

struct SlurmSubmission {
  std::vector<std::size_t> shards;  // submitted this time
  std::string arrayJob, mergeJob;   // job ids; empty when not submitted
  std::string text;                 // what was (or, with --dry-run, would be) written and run
  bool alreadyMerged = false;
};

SlurmSubmission submitSlurmEval(const SlurmEvalOptions& options);

}  // namespace cuset
