#pragma once
// KernelBench's result files, written beside results.jsonl so its own analysis reads a CuSeT run as it
// reads one of eval_from_generations.py (docs/kernelbench.md "Replacing eval_from_generations.py"):
// eval_results.json, pass_at_k_results.json (more than one sample per problem) and, with a baseline
// timing file, analysis_results.json (fast_p at its thresholds, the geometric-mean speedup).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/evaluator/kernelbench/kernelbench_options.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

// What a GPU run names in KernelBench's `hardware` and `device` fields.
struct KernelBenchHardware {
  std::string name = "cpu_simulator";  // torch.cuda.get_device_name() on a GPU
  bool gpu = false;
};

// KernelBench's fast_p: the fraction of `speedups` (nullopt: not correct) strictly above p, over all of them.
double kernelBenchFastP(const std::vector<std::optional<double>>& speedups, double p);

// eval_results.json for the results of one level (KernelBench keys problems by number within a level).
nlohmann::ordered_json kernelBenchEvalResults(const ProblemSuite& suite, const std::vector<EvalResult>& results, const KernelBenchHardware& hardware);
// pass_at_k_results.json from an eval_results.json, as KernelBench's calculate_pass_at_k computes it
// (with the one unbiased estimator, passAtK, of results/estimators.hpp).
nlohmann::ordered_json kernelBenchPassAtKResults(const nlohmann::ordered_json& evalResults, const std::vector<int>& ks);

// Writes the files for every KernelBench level among `results` (one level: in the run folder; several:
// in RUN/kernelbench/level{L}/) and returns their paths. Results of problems not imported from
// KernelBench are left out. Throws cuset::Error for an unreadable baseline file.
std::vector<std::filesystem::path> writeKernelBenchResultFiles(const std::filesystem::path& runDir, const ProblemSuite& suite,
                                                               const std::vector<EvalResult>& results, const KernelBenchRunOptions& options,
                                                               const KernelBenchHardware& hardware);

}  // namespace cuset
