// import-report.json and import-report.md of `cuset import kernelbench`.
#include <fmt/format.h>

#include <map>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/importer/kernelbench_import.hpp"

namespace cuset {

nlohmann::json importReportJson(const KernelBenchImportReport& report) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : report.problems) {
    nlohmann::json e = {{"source", p.source}, {"status", p.status}, {"seconds", p.seconds}};
    if (!p.reason.empty()) e["reason"] = p.reason;
    if (!p.id.empty()) e["id"] = p.id;
    if (!p.details.is_null()) e["details"] = p.details;
    problems.push_back(std::move(e));
  }
  return {{"kernelbench_commit", report.commit}, {"kernelbench_root", report.root}, {"imported", report.imported()},
          {"total", report.problems.size()}, {"problems", problems}};
}

KernelBenchImportReport importReportFromJson(const nlohmann::json& json, const std::string& source) {
  KernelBenchImportReport report;
  try {
    report.commit = json.at("kernelbench_commit").get<std::string>();
    report.root = json.value("kernelbench_root", "");
    for (const auto& e : json.at("problems")) {
      ImportedProblem p;
      p.source = e.at("source").get<std::string>();
      p.status = e.at("status").get<std::string>();
      p.reason = e.value("reason", "");
      p.id = e.value("id", "");
      p.seconds = e.value("seconds", 0.0);
      if (e.contains("details")) p.details = e.at("details");
      report.problems.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    throw makeError("{}: not an import report: {}", source, e.what());
  }
  return report;
}

std::string importReportMarkdown(const KernelBenchImportReport& report) {
  std::map<std::string, std::pair<std::size_t, std::size_t>> perLevel;  // level -> imported, total
  for (const auto& p : report.problems) {
    auto& [imported, total] = perLevel[p.source.substr(0, p.source.find('/'))];
    ++total;
    if (p.status == "imported") ++imported;
  }
  std::string out = fmt::format("# KernelBench import (commit {})\n\n", report.commit);
  out += "| level | imported | files | share |\n|---|---|---|---|\n";
  for (const auto& [level, counts] : perLevel) {
    out += fmt::format("| {} | {} | {} | {:.1f}% |\n", level, counts.first, counts.second,
                       counts.second ? 100.0 * static_cast<double>(counts.first) / static_cast<double>(counts.second) : 0.0);
  }
  out += fmt::format("| all | {} | {} | |\n\n", report.imported(), report.problems.size());
  out += "## Skipped\n\n";
  bool any = false;
  for (const auto& p : report.problems) {
    if (p.status == "imported") continue;
    any = true;
    out += fmt::format("- `{}`: {}\n", p.source, p.reason);
  }
  if (!any) out += "None.\n";
  out += "\n## Imported\n\n| source | problem | reference | notes |\n|---|---|---|---|\n";
  for (const auto& p : report.problems) {
    if (p.status != "imported") continue;
    const bool scripted = p.details.is_object() && p.details.value("scripted", false);
    std::string notes = p.reason;
    if (p.details.is_object() && p.details.contains("scaling")) {
      const auto& s = p.details.at("scaling");
      notes += fmt::format("{}small: {} constants / {}", notes.empty() ? "" : "; ", s.value("how", "?"), s.value("factor", 0));
    }
    out += fmt::format("| `{}` | `{}` | {} | {} |\n", p.source, p.id, scripted ? "scripted" : "traced", notes);
  }
  return out;
}

}  // namespace cuset
