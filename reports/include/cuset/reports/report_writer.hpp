#pragma once
// `cuset report`: a run folder -> summary.json, summary.md, junit.xml, report.html (written into it).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

struct ReportOptions {
  std::filesystem::path runDir;
  std::optional<std::filesystem::path> compareDir;  // base run for regression comparison
  std::filesystem::path assetsDir;                  // empty: findReportAssetsDir()
  // Count problems flagged defective (`defect:`) in the metrics; nullopt: as the run said (`cuset eval
  // --include-defective`, default no).
  std::optional<bool> includeDefective;
};

struct ReportOutcome {
  nlohmann::json summary;
  std::vector<EvalResult> results;  // the run's results as read (a leaderboard shows their sources)
  std::vector<std::filesystem::path> written;
  std::vector<std::string> warnings;  // also in summary["warnings"]
  bool regression = false;            // the comparison found a "worse" problem
  bool assetsInlined = false;
};

// Where the built front-end assets are: $CUSET_REPORT_ASSETS, else the build tree's copy, else
// <exe>/../share/cuset/report-assets; empty when none has report-assets.js.
std::filesystem::path findReportAssetsDir();

// The three files of a single-page report (`cuset loop`'s comparison, `cuset leaderboard`): STEM.json,
// STEM.md and STEM.html in `dir`, each replaced atomically.
struct ReportPages {
  std::filesystem::path json, markdown, html;
};
ReportPages writeReportPages(const std::filesystem::path& dir, const std::string& stem, const nlohmann::json& data, const std::string& markdown,
                             const std::string& html);

// Writes the four files atomically (a crash leaves the old ones). Throws cuset::Error when the run
// folder (or the base) has no results to read.
ReportOutcome writeRunReports(const ReportOptions& options);

}  // namespace cuset
