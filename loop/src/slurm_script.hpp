#pragma once
// What `cuset slurm eval` and `cuset loop --slurm` share: bash quoting, the #SBATCH header of a
// one-task job, and sbatch itself.
#include <filesystem>
#include <string>
#include <vector>

namespace cuset {

// Single-quoted for bash: the scripts run arguments exactly as given.
std::string shellQuote(const std::string& s);
std::string quoteAll(const std::vector<std::string>& args);

std::string sbatchHeader(const std::string& jobName, const std::filesystem::path& log, const std::string& partition, const std::string& timeLimit,
                         const std::filesystem::path& workDir);

// `sbatch --parsable ARGS...`; the job id, or an error with sbatch's own words.
std::string sbatch(const std::vector<std::string>& args);

// A job script, written atomically and made executable.
void writeJobScript(const std::filesystem::path& path, const std::string& text);

// The sbatch calls of one submission, in order, each also written down as its command line. In a dry
// run nothing is submitted and a call returns `placeholder` for its job id, so a later call's
// dependency prints as e.g. `--dependency=afterany:<array job>`.
class SbatchSequence {
 public:
  explicit SbatchSequence(bool dryRun) : dryRun_(dryRun) {}
  std::string submit(const std::vector<std::string>& args, const std::string& placeholder);
  const std::string& commands() const { return commands_; }

 private:
  bool dryRun_;
  std::string commands_;
};

}  // namespace cuset
