// import-report.json and import-report.md of `cuset import kernelbench`.
#include <fmt/format.h>

#include <map>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_import.hpp"

namespace cuset {

nlohmann::json importReportJson(const KernelBenchImportReport& report) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : report.problems) {
    nlohmann::json e = {{"source", p.source}, {"status", p.status}, {"seconds", p.seconds}};
    if (!p.reason.empty()) e["reason"] = p.reason;
    if (p.transient) e["transient"] = true;
    if (!p.id.empty()) e["id"] = p.id;
    if (!p.details.is_null()) e["details"] = p.details;
    problems.push_back(std::move(e));
  }
  nlohmann::json levels = nlohmann::json::object();
  for (const auto& [level, c] : importCountsPerLevel(report)) {
    levels[level] = {{"files", c.files}, {"imported", c.imported}, {"flagged", c.flagged}, {"gpu_only", c.gpuOnly}, {"skipped", c.skipped}};
  }
  return {{"kernelbench_commit", report.commit},
          {"kernelbench_root", report.root},
          {"imported", report.imported()},
          {"total", report.problems.size()},
          {"levels", levels},
          {"problems", problems}};
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
      p.transient = e.value("transient", false);
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

namespace {

std::string shareOf(std::size_t part, std::size_t whole) {
  return whole ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "";
}

// One bullet per problem `pick` selects, with `text` of it; "None." when there is none.
template <typename Pick, typename Text>
std::string bulletList(const KernelBenchImportReport& report, Pick pick, Text text) {
  std::string out;
  for (const auto& p : report.problems) {
    if (pick(p)) out += fmt::format("- `{}`: {}\n", p.source, text(p));
  }
  return out.empty() ? "None.\n" : out;
}

}  // namespace

std::string importReportMarkdown(const KernelBenchImportReport& report) {
  const auto counts = importCountsPerLevel(report);
  std::string out = fmt::format("# KernelBench import (commit {})\n\n", report.commit);
  out +=
      "Flagged problems are imported but KernelBench's reference is degenerate or stochastic: reports leave them out of "
      "headline metrics unless asked (`--include-defective`). GPU-only problems have no size set small enough to simulate: "
      "the simulator answers `unsupported` for them.\n\n";
  out += "| level | files | imported | share | flagged | GPU-only | skipped |\n|---|---|---|---|---|---|---|\n";
  for (const auto& [level, c] : counts) {
    if (level == "all") continue;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", level, c.files, c.imported, shareOf(c.imported, c.files), c.flagged, c.gpuOnly,
                       c.skipped);
  }
  if (const auto all = counts.find("all"); all != counts.end()) {
    const ImportCounts& c = all->second;
    out += fmt::format("| all | {} | {} | {} | {} | {} | {} |\n", c.files, c.imported, shareOf(c.imported, c.files), c.flagged, c.gpuOnly, c.skipped);
  }
  out += "\n## Skipped\n\n";
  out += bulletList(
      report, [](const ImportedProblem& p) { return p.status != "imported"; }, [](const ImportedProblem& p) { return p.reason; });
  out += "\n## Flagged: KernelBench's reference is defective\n\n";
  out += bulletList(
      report, [](const ImportedProblem& p) { return !p.defect().empty(); },
      [](const ImportedProblem& p) { return fmt::format("{}: {}", p.defect(), p.details.at("defect").value("reason", "")); });
  out += "\n## GPU-only: no size set small enough to simulate\n\n";
  out += bulletList(
      report, [](const ImportedProblem& p) { return p.status == "imported" && !p.simulable(); },
      [](const ImportedProblem& p) { return fmt::format("size sets {}", p.details.at("size_sets").dump()); });
  out += "\n## Imported\n\n| source | problem | reference | notes |\n|---|---|---|---|\n";
  for (const auto& p : report.problems) {
    if (p.status != "imported") continue;
    const bool scripted = p.details.is_object() && p.details.value("scripted", false);
    std::string notes = p.reason;
    if (p.details.is_object() && p.details.contains("scaling")) {
      const auto& s = p.details.at("scaling");
      const std::string how = s.value("how", "?");
      const int factor = s.value("factor", 0);
      const std::string scaling = how == "none"                   ? "KernelBench's own sizes"
                                  : how == "batch" && factor == 0 ? "batch down to 1"
                                                                  : fmt::format("{} constants / {}", how, factor);
      notes += fmt::format("{}{}: {}", notes.empty() ? "" : "; ", s.value("set", "small"), scaling);
    }
    out += fmt::format("| `{}` | `{}` | {} | {} |\n", p.source, p.id, scripted ? "scripted" : "traced", notes);
  }
  return out;
}

}  // namespace cuset
