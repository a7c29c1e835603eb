#pragma once
// analysis.html for `cuset analyze`: one self-contained page (same approach as report.html: inline
// SVG charts, no network) from the analysis JSON of cuset_trainer's analyzeModel.
#include <nlohmann/json.hpp>
#include <string>

namespace cuset {

std::string renderAnalysisHtml(const nlohmann::json& analysis);

}  // namespace cuset
