#pragma once
// Renderers of a run's summary (and, for per-candidate views, its results) into the report files.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

// summary.md: run header, leaderboard, per-model pass@k by level, verdicts with top reasons,
// comparison (when the summary has one), warnings.
std::string renderMarkdown(const nlohmann::json& summary);

// junit.xml: a testsuite per model and level, a testcase per candidate; a non-correct verdict is a
// <failure> whose message is "verdict: reason".
std::string renderJunit(const nlohmann::json& summary, const std::vector<EvalResult>& results);

// report.html: one self-contained file. `assetsScript` and `assetsStyle` are the front-end assets to
// inline (syntax highlighting); empty ones give a visible notice and plain source listings.
std::string renderHtml(const nlohmann::json& summary, const std::vector<EvalResult>& results, const std::string& assetsScript,
                       const std::string& assetsStyle);

// Formatting shared by the renderers.
std::string formatPercent(double fraction);  // 0.4567 -> "45.7%"
// Text fit for a Markdown table cell: newlines become spaces, pipes are escaped.
std::string markdownCell(std::string text);
// summary.json's `kernelbench_agreement` as a report section (kernelbench_agreement.cpp); empty without one.
std::string kernelBenchAgreementMarkdown(const nlohmann::json& agreement);
// The k a model's pass@k columns show (summary.json `pass_at_k_values`; 1, 5, 10 for older summaries).
std::vector<int> passAtKColumns(const nlohmann::json& model);
std::string htmlEscape(const std::string& text);  // also valid XML text and attribute content
std::string describeRun(const nlohmann::json& summary);
// A problem's origin from summary.json ({suite, file, commit}) -> "kernelbench level1/19_ReLU.py @ 423217d".
std::string originText(const nlohmann::json& origin);  // "backend sim (CPU simulator, no speedups) · seed 42 · ..."
// What a run covered (summary.json `coverage`), as plain sentences: problems per level and the suites'
// commits; flagged defective problems and whether the metrics count them; problems unsupported on this
// backend. Empty for a summary without coverage.
std::string coverageText(const nlohmann::json& coverage);
// Click-to-sort for every `table.sortable` of a page (numbers by value, else text; a cell's data-sort
// overrides its text): statements for the inside of the page's inline script function.
const char* sortableTablesScript();
// CSS of the small single-page reports (analysis, loop comparison): typography, tables, chart grid.
const char* simplePageStyle();

}  // namespace cuset
