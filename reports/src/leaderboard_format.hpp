#pragma once
// Text that leaderboard.md and leaderboard.html share: a row's numbers, the models' sources, what the
// numbers cover, a grid cell. Private to cuset_reports.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuset::leaderboard {

std::string percentOr(const nlohmann::json& row, const char* key);  // "45.7%", or "–" when absent
std::string fastOr(const nlohmann::json& row, const char* p);       // the row's fast_p, or "–"
std::string tokensText(const nlohmann::json& generation);           // "prompt + completion (N unknown)"
std::string sharesText(const nlohmann::json& row);                  // verdict shares in verdict order
std::string comparisonText(const nlohmann::json& row);
std::string notEvaluated(const nlohmann::json& row);
std::string sourceText(const nlohmann::json& source);               // "served @ endpoint", or the checkpoint
std::string levelName(const nlohmann::json& level);                 // "level 1"
std::string moneyText(const nlohmann::json& row, const char* key);  // "0.0123", or "–"
std::string perSolvedText(const nlohmann::json& row);               // cost or tokens per solved problem, or "–"

// What the numbers cover, as sentences: problems and suites, who judged them how, what pass@k, solved
// and fast_p mean here, and what the pure-kernel numbers leave out.
std::vector<std::string> coversText(const nlohmann::json& leaderboard);
// The settings every model was judged under, as (name, value) rows.
std::vector<std::pair<std::string, std::string>> settingsRows(const nlohmann::json& leaderboard);
// One model's generation settings in column order of kModelSettingColumns.
inline constexpr const char* kModelSettingColumns[] = {
    "endpoint or checkpoint", "served model", "prompt", "temperature", "top_p", "max_tokens", "seed"};
std::vector<std::string> modelSettings(const nlohmann::json& source);

// A grid cell: "2/3" correct (with the best speedup when timed), else its best verdict and "0/n".
std::string cellText(const nlohmann::json& cell);

// The evaluated models of leaderboard.json's `models`, in leaderboard order.
std::vector<std::string> evaluatedModels(const nlohmann::json& leaderboard);
// The head-to-head matrix's cell for row A against column B: the problems A solves and B does not,
// with GPU timing the geometric mean of A's best speedup over B's ("2 (1.60x)"); "–" for A itself.
std::string headToHeadText(const nlohmann::json& leaderboard, const std::string& a, const std::string& b);

}  // namespace cuset::leaderboard
