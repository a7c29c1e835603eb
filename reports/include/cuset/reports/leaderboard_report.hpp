#pragma once
// The page `cuset leaderboard` writes: one row per model (pass@1, pass@k, fast_p on GPU runs, verdict
// shares, tokens and cost), ranked like a run's own leaderboard, with links to each model's report and,
// against a base leaderboard, each model's comparison counts. Computed from plain inputs (each
// model's summary.json and generation totals) so it is tested without any model.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cuset {

struct LeaderboardEntry {
  std::string name;
  nlohmann::json source = nlohmann::json::object();      // endpoint + served model, or checkpoint; prompt; parameters
  nlohmann::json summary;                                 // the model's summary.json; null: not evaluated yet
  nlohmann::json generation = nlohmann::json::object();  // samples, failed, prompt/completion tokens, usage_missing, latency
  std::optional<double> promptPricePerMTok;
  std::optional<double> completionPricePerMTok;
  std::string report;  // the model's report.html, relative to the leaderboard folder
  std::string error;   // why this model could not be generated or evaluated this time
};

struct LeaderboardInput {
  std::string name;
  int k = 1;
  std::string compareLabel;  // the base leaderboard, when compared
  std::vector<LeaderboardEntry> entries;
  nlohmann::json info = nlohmann::json::object();  // suite, backend, eval settings: carried as is
};

inline constexpr int kLeaderboardSchemaVersion = 1;

nlohmann::json computeLeaderboard(const LeaderboardInput& input);
std::string renderLeaderboardMarkdown(const nlohmann::json& leaderboard);
std::string renderLeaderboardHtml(const nlohmann::json& leaderboard);

}  // namespace cuset
