#include "cuset/evaluator/kernelbench/kernelbench_run_folder.hpp"

#include <fmt/format.h>

#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace fs = std::filesystem;

namespace cuset {

KernelBenchRunFolderWrite writeKernelBenchRunFolder(const std::vector<Candidate>& candidates, const ProblemSuite& suite, const fs::path& dir) {
  KernelBenchRunFolderWrite out;
  fs::create_directories(dir);
  for (const auto& c : candidates) {
    const Problem* problem = suite.find(c.problemId);
    if (!c.readError.empty()) {
      out.skipped.push_back(c.readError);
    } else if (!problem || !problem->origin || problem->origin->suite != "kernelbench") {
      out.skipped.push_back(fmt::format("{}: {} is not a problem imported from KernelBench", c.origin, c.problemId));
    } else {
      const auto& o = *problem->origin;
      writeFileAtomic(dir / fmt::format("level_{}_problem_{}_sample_{}_kernel.py", o.level, o.number, c.sample), c.source);
      ++out.written;
    }
  }
  return out;
}

}  // namespace cuset
