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

std::string sbatchHeader(const std::string& jobName, const std::filesystem::path& log, const std::string& partition,
                         const std::string& timeLimit, const std::filesystem::path& workDir);

// `sbatch --parsable ARGS...`; the job id, or an error with sbatch's own words.
std::string sbatch(const std::vector<std::string>& args);

}  // namespace cuset
