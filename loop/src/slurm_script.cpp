#include "slurm_script.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/subprocess.hpp"

namespace cuset {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string quoteAll(const std::vector<std::string>& args) {
  std::vector<std::string> q;
  for (const auto& a : args) q.push_back(shellQuote(a));
  return fmt::format("{}", fmt::join(q, " "));
}

std::string sbatchHeader(const std::string& jobName, const std::filesystem::path& log, const std::string& partition, const std::string& timeLimit,
                         const std::filesystem::path& workDir) {
  std::string h = fmt::format("#!/bin/bash\n#SBATCH --job-name={}\n#SBATCH --output={}\n#SBATCH --chdir={}\n#SBATCH --ntasks=1\n", jobName,
                              log.string(), workDir.string());
  if (!partition.empty()) h += fmt::format("#SBATCH --partition={}\n", partition);
  if (!timeLimit.empty()) h += fmt::format("#SBATCH --time={}\n", timeLimit);
  return h;
}

std::string sbatch(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  const SubprocessResult r = runSubprocess(argv, std::chrono::seconds(60));
  if (!r.ok()) throw makeError("sbatch {} failed: {}", fmt::join(args, " "), r.output.empty() ? "no output" : r.output);
  std::string id = r.output.substr(0, r.output.find_first_of(";\n"));
  if (id.empty()) throw makeError("sbatch {} printed no job id: {}", fmt::join(args, " "), r.output);
  return id;
}

void writeJobScript(const std::filesystem::path& path, const std::string& text) {
  writeFileAtomic(path, text);
  std::filesystem::permissions(path, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
}

std::string SbatchSequence::submit(const std::vector<std::string>& args, const std::string& placeholder) {
  commands_ += fmt::format("sbatch --parsable {}\n", fmt::join(args, " "));
  return dryRun_ ? placeholder : sbatch(args);
}

}  // namespace cuset
