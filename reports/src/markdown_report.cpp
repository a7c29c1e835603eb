#include <fmt/format.h>

#include <map>

#include "cuset/reports/renderers.hpp"

namespace cuset {
namespace {

std::string passCell(const nlohmann::json& group, int k) {
  const auto& pk = group.value("pass_at_k", nlohmann::json::object());
  const std::string key = std::to_string(k);
  return pk.contains(key) ? formatPercent(pk[key]["value"].get<double>()) : "-";
}

}  // namespace

namespace {

std::string leaderboardSection(const nlohmann::json& leaderboard) {
  std::string md;
  md += "## Leaderboard\n\n| rank | model | pass@1 | fast_1 | geomean speedup | correct |\n|---|---|---|---|---|---|\n";
  for (const auto& row : leaderboard) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", row["rank"].get<int>(), markdownCell(row["model"]),
                      row.contains("pass_at_1") ? formatPercent(row["pass_at_1"]) : "-", row.contains("fast_1") ? formatPercent(row["fast_1"]) : "-",
                      row.contains("geomean_speedup") ? fmt::format("{:.2f}x", row["geomean_speedup"].get<double>()) : "-",
                      formatPercent(row["correct_rate"]));
  }
  md += "\n";
  return md;
}

// One model: its table by level (and pure kernels), its verdicts and their most frequent reasons.
std::string modelSection(const std::string& model, const nlohmann::json& m, bool gpu) {
  std::string md;
  md += fmt::format("## Model `{}`\n\n", model);
  const std::vector<int> ks = passAtKColumns(m);
  std::string header = "| level | problems | candidates | correct |", rule = "|---|---|---|---|";
  for (int k : ks) {
    header += fmt::format(" pass@{} |", k);
    rule += "---|";
  }
  if (gpu) {
    header += " fast_1 | geomean speedup |";
    rule += "---|---|";
  }
  md += header + "\n" + rule + "\n";
  auto addRow = [&](const std::string& label, const nlohmann::json& g) {
    md += fmt::format("| {} | {} | {} | {} |", label, g["problems"].get<int>(), g["candidates"].get<int>(), formatPercent(g["correct_rate"]));
    for (int k : ks) md += fmt::format(" {} |", passCell(g, k));
    if (gpu) {
      md += fmt::format(" {} | {} |", g.contains("fast_p") ? formatPercent(g["fast_p"]["1"]) : "-",
                        g.contains("geomean_speedup") ? fmt::format("{:.2f}x", g["geomean_speedup"].get<double>()) : "-");
    }
    md += "\n";
  };
  for (const auto& [level, g] : m["levels"].items()) addRow(level == "0" ? "other" : "level " + level, g);
  addRow("**all**", m["overall"]);
  if (m.contains("pure_kernel")) {
    // A correct candidate that runs library ops (a kept nn.Conv2d, torch.matmul) is no kernel of the model's.
    addRow("**pure kernels**", m["pure_kernel"]);
    md += fmt::format(
        "\n{} candidate(s) run LibTorch ops beside their kernels; the *pure kernels* row counts only candidates that "
        "run none as solved.\n",
        m["pure_kernel"].value("library_candidates", 0));
  }
  if (const auto unsupported = m["overall"].value("unsupported", 0); unsupported > 0) {
    md += fmt::format("\n{} candidate(s) unsupported: not judged (the harness cannot run them here), outside every rate above.\n", unsupported);
  }
  md += "\n**Verdicts:** ";
  std::string sep;
  for (const auto& [v, n] : m["overall"]["verdicts"].items()) {
    md += fmt::format("{}{} {}", sep, v, n.get<int>());
    sep = ", ";
  }
  md += "\n\n";
  if (!m["overall"]["top_reasons"].empty()) {
    md += "| verdict | count | most frequent reason |\n|---|---|---|\n";
    for (const auto& [v, reasons] : m["overall"]["top_reasons"].items()) {
      for (const auto& r : reasons) md += fmt::format("| {} | {} | {} |\n", v, r["count"].get<int>(), markdownCell(r["reason"]));
    }
    md += "\n";
  }
  return md;
}

// `cuset report --compare`: what changed against the base run.
std::string comparisonSection(const nlohmann::json& cmp) {
  std::string md;
  md += fmt::format("## Comparison with `{}`\n\n", cmp["base"].get<std::string>());
  const auto& c = cmp["counts"];
  md += fmt::format("worse {} · ambiguous {} · better {} · same {} · new {} · missing {} · not judged {}\n\n", c["worse"].get<int>(),
                    c["ambiguous"].get<int>(), c["better"].get<int>(), c["same"].get<int>(), c["new"].get<int>(), c["missing"].get<int>(),
                    c.value("not_judged", 0));
  md += "| status | model | problem | detail |\n|---|---|---|---|\n";
  for (const auto& row : cmp["rows"]) {
    if (row["status"] == "same") continue;  // the counts say how many; the table lists what changed
    md += fmt::format("| {} | {} | {} | {} |\n", row["status"].get<std::string>(), markdownCell(row["model"]), row["problem"].get<std::string>(),
                      markdownCell(row.value("why", "")));
  }
  md += "\n";
  return md;
}

}  // namespace

std::string renderMarkdown(const nlohmann::json& summary) {
  std::string md = "# CuSeT evaluation report\n\n";
  md += describeRun(summary) + "\n\n";
  if (const std::string covered = coverageText(summary.value("coverage", nlohmann::json())); !covered.empty()) md += covered + "\n\n";
  const bool gpu = summary.value("timing", "none") == "gpu";
  const auto& models = summary.value("models", nlohmann::json::object());

  // Imported problems: where each came from (KernelBench's file and commit).
  std::map<std::string, std::string> origins;
  for (const auto& [model, m] : models.items()) {
    if (!m.contains("problems")) continue;
    for (const auto& [id, p] : m["problems"].items()) {
      if (p.contains("origin")) origins.emplace(id, originText(p["origin"]));
    }
  }
  if (summary["leaderboard"].size() > 1) md += leaderboardSection(summary["leaderboard"]);
  for (const auto& [model, m] : models.items()) md += modelSection(model, m, gpu);

  if (summary.contains("comparison")) md += comparisonSection(summary["comparison"]);

  if (const auto flagged = summary.value("coverage", nlohmann::json::object()).value("flagged", nlohmann::json::object()); !flagged.empty()) {
    md += "## Flagged problems\n\n| problem | defect | why |\n|---|---|---|\n";
    for (const auto& [id, d] : flagged.items())
      md += fmt::format("| `{}` | {} | {} |\n", id, d.value("kind", ""), markdownCell(d.value("reason", "")));
    md += "\n";
  }
  if (!origins.empty()) {
    md += "## Problem origins\n\n| problem | from |\n|---|---|\n";
    for (const auto& [id, from] : origins) md += fmt::format("| `{}` | {} |\n", id, markdownCell(from));
    md += "\n";
  }
  md += kernelBenchAgreementMarkdown(summary.value("kernelbench_agreement", nlohmann::json()));
  if (!summary["warnings"].empty()) {
    md += "## Warnings\n\n";
    for (const auto& w : summary["warnings"]) md += "- " + markdownCell(w) + "\n";
    md += "\n";
  }
  return md;
}

}  // namespace cuset
