#pragma once
// The page `cuset leaderboard` writes: one row per model (pass@1, pass@k, fast_p on GPU runs, verdict
// shares, tokens, cost and cost per solved problem), ranked like a run's own leaderboard; per level; a
// problem x model grid whose cells open the candidates behind them; head to head for any two models;
// cost and speed charts; and what the numbers cover. Computed from plain inputs (each model's
// summary.json, results and generation totals, the problems' statements) so it is tested without any
// model. leaderboard.json holds everything the page shows (docs/cli-leaderboard.md has its schema).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

struct LeaderboardEntry {
  std::string name;
  nlohmann::json source = nlohmann::json::object();      // endpoint + served model, or checkpoint; prompt; parameters
  nlohmann::json summary;                                // the model's summary.json; null: not evaluated yet
  nlohmann::json generation = nlohmann::json::object();  // samples, failed, prompt/completion tokens, usage_missing, latency
  std::optional<double> promptPricePerMTok;
  std::optional<double> completionPricePerMTok;
  std::string report;               // the model's report.html, relative to the leaderboard folder
  std::string error;                // why this model could not be generated or evaluated this time
  std::vector<EvalResult> results;  // the model's judged candidates (their sources, verdicts, reasons)
};

struct LeaderboardInput {
  std::string name;
  int k = 1;
  std::string compareLabel;  // the base leaderboard, when compared
  std::vector<LeaderboardEntry> entries;
  nlohmann::json info = nlohmann::json::object();  // suite, backend, eval settings: carried as is
  // Problem id -> {name, tags, description, statement}: what the grid's problem links open.
  nlohmann::json problems = nlohmann::json::object();
};

// 2: per problem grid, candidates and sources, statements, head to head, solved and cost per solved.
inline constexpr int kLeaderboardSchemaVersion = 2;

nlohmann::json computeLeaderboard(const LeaderboardInput& input);
std::string renderLeaderboardMarkdown(const nlohmann::json& leaderboard);
std::string renderLeaderboardHtml(const nlohmann::json& leaderboard);

}  // namespace cuset
