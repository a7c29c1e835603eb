#pragma once
// The report of `cuset refine`: per problem the rounds (verdicts, whether solved, the best speedup so
// far), the chosen kernel and why the search stopped; over the suite the correct rate after each
// round (CUDA-LLM's correctness rate), the mean and geometric-mean speedup of the chosen kernels, and
// the requests and tokens spent.
#include <nlohmann/json.hpp>
#include <string>

namespace cuset {

inline constexpr int kRefineSchemaVersion = 1;

// `problems`: [{problem, rounds: [{round, candidates, correct, verdicts, solved, best_speedup?}], stop,
// transcript, best?: {round, sample, speedup?, median_ms?, peak_fraction?}}]; `info` is carried as is
// (model, settings, requests, tokens, rounds).
nlohmann::json computeRefineReport(const nlohmann::json& problems, const nlohmann::json& info);
std::string renderRefineMarkdown(const nlohmann::json& report);
std::string renderRefineHtml(const nlohmann::json& report);

}  // namespace cuset
