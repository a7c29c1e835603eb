#pragma once
// Writing candidates as a KernelBench run folder (`cuset generate --layout kernelbench`): one
// level_{L}_problem_{P}_sample_{S}_kernel.py per sample of an imported KernelBench problem, the layout
// KernelBench's generate_samples.py writes and its eval_from_generations.py reads.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/evaluator/candidate/candidate.hpp"

namespace cuset {

struct KernelBenchRunFolderWrite {
  std::size_t written = 0;
  std::vector<std::string> skipped;  // "<origin>: why" (no code in the response, not a KernelBench problem)
};

// Writes each candidate's code (its source, or the code extracted from its response) into `dir`.
KernelBenchRunFolderWrite writeKernelBenchRunFolder(const std::vector<Candidate>& candidates, const ProblemSuite& suite,
                                                    const std::filesystem::path& dir);

}  // namespace cuset
