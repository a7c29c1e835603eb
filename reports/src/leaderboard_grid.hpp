#pragma once
// The per-problem half of the leaderboard: the problem x model grid with the candidates behind each
// cell, the problems' statements, and head to head for every pair of models. Private to cuset_reports.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/reports/leaderboard_report.hpp"

namespace cuset {

// Where a verdict stands when a cell shows its best candidate: 0 for correct, then the failures
// closest to a correct kernel (a wrong answer ran; a compile error did not get that far).
int cellVerdictRank(std::string_view verdict);

// {"problems": [...], "candidates": [...], "sources": {...}, "statements": {...}} for the evaluated
// models `models`, in leaderboard order.
nlohmann::json leaderboardGrid(const LeaderboardInput& in, const std::vector<std::string>& models);

// For every pair of models (a ranked above b), over the problems both were judged on and that count in
// the headline metrics: the ones only one of them solves, and with GPU timing the ratio of their best
// speedups where both solve it.
nlohmann::json headToHead(const nlohmann::json& problems, const std::vector<std::string>& models);

}  // namespace cuset
