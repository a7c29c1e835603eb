#pragma once
// Run metrics (DESIGN §4): unbiased pass@k, fast_p, geometric-mean speedup, verdict counts and their
// most frequent reasons, per model, per level and per problem. summary.json is their serialised form
// and the source every renderer reads.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/results/estimators.hpp"  // passAtK, geometricMean, kFastP
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

inline constexpr int kSummarySchemaVersion = 1;
inline constexpr int kPassAtK[] = {1, 5, 10};
// The k a report shows: 1, 5, 10 and the samples per problem a run drew (pass@n), in order.
std::vector<int> passAtKValues(std::int64_t samplesPerProblem);
// Relative noise of timing samples: standard deviation / mean (nullopt below two samples).
std::optional<double> relativeNoise(const std::vector<double>& samples);

// Strips what varies between otherwise identical failures (trial numbers, values, indices), so
// reasons can be counted: "trial 3 of 5: y: 12 of 64000 elements differ ..." -> "y: N of N elements
// differ ...".
std::string reasonClass(const std::string& reason);

// A GROUP's metric: group[field][key] (its "value" when that is an object); -1 when absent.
double groupMetric(const nlohmann::json& group, const char* field, const char* key);

// Leaderboard order of GROUPs (indices, best first): fast_1 first (when timed), then pass@1, then the
// correct rate; ties keep their order.
std::vector<std::size_t> leaderboardOrder(const std::vector<nlohmann::json>& groups);

// KernelBench's check beside CuSeT's verdict (results' kernelbench_correct): the 2 x 2 table, the
// candidates KernelBench would pass and CuSeT does not, its static checker's findings; null when no
// result has any of them.
nlohmann::json kernelBenchAgreement(const std::vector<EvalResult>& results);

// The whole summary.json for a run: `runInfo` is run.json (may be empty), `warnings` are carried
// into the summary (e.g. a torn results line).
nlohmann::json computeSummary(const std::vector<EvalResult>& results, const nlohmann::json& runInfo, const std::vector<std::string>& warnings);

}  // namespace cuset
