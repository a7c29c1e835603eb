#pragma once
// The comparison report of `cuset loop`: pass@1 / pass@k per objective on each held-out set, mean and
// spread over seeds, the untrained baseline, fast_1 when timed on a GPU, training curves, and links to
// every run's own report. Computed from plain inputs so it can be tested without training anything.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

struct LoopRunInput {
  std::string objective;  // "untrained" for the baseline
  std::uint64_t seed = 0;
  std::string dir;  // relative to the loop folder
  bool evaluated = false;
  std::vector<EvalResult> results;
  std::vector<std::pair<std::int64_t, double>> loss;  // (step, loss) from metrics.jsonl
};

struct LoopComparisonInput {
  std::string name;
  int k = 1;                                      // samples per problem
  std::map<std::string, std::string> problemSet;  // held-out problem id -> "unseen_instance" | "unseen_family"
  std::vector<std::string> objectives;            // row order; "untrained" first when present
  std::vector<LoopRunInput> runs;
  nlohmann::json info = nlohmann::json::object();  // config, data card summary, backend: carried as is
};

inline constexpr int kLoopSchemaVersion = 1;

nlohmann::json computeLoopComparison(const LoopComparisonInput& input);
std::string renderLoopMarkdown(const nlohmann::json& comparison);
std::string renderLoopHtml(const nlohmann::json& comparison);

}  // namespace cuset
