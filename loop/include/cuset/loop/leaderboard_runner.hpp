#pragma once
// `cuset leaderboard`: generate -> eval for every model of a LeaderboardConfig, resumably, then one
// leaderboard (JSON, Markdown, HTML) over their reports, optionally compared with a base leaderboard.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuset/loop/leaderboard_config.hpp"

namespace cuset {

struct LeaderboardRunOptions {
  std::optional<std::filesystem::path> compareDir;  // a base leaderboard folder (its models/<name>/eval runs)
  bool reportOnly = false;                          // rewrite the leaderboard from what has finished; run nothing
  bool showProgress = true;
};

struct LeaderboardSummary {
  std::filesystem::path html;  // beside it: leaderboard.json and leaderboard.md
  std::string table;           // the Markdown ranking, for the terminal
  bool regression = false;     // some model is worse than in the base leaderboard
  std::size_t modelsRun = 0, modelsSkipped = 0;
  std::vector<std::string> failures;  // "model: error" for models that could not be generated or evaluated
};

LeaderboardSummary runLeaderboard(const LeaderboardConfig& config, const LeaderboardRunOptions& options);

}  // namespace cuset
