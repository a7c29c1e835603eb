// summary.json's `kernelbench_agreement`: KernelBench's own check (kernelbench_correct) beside CuSeT's
// verdict, candidate by candidate, and the report section listing what KernelBench would pass and
// CuSeT does not (docs/kernelbench.md "Replacing eval_from_generations.py").
#include <fmt/format.h>

#include <map>

#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"

namespace cuset {

nlohmann::json kernelBenchAgreement(const std::vector<EvalResult>& results) {
  std::size_t both = 0, kernelbenchOnly = 0, cusetOnly = 0, neither = 0, notReproduced = 0, checked = 0;
  nlohmann::json passedThereOnly = nlohmann::json::array(), passedHereOnly = nlohmann::json::array();
  std::map<std::string, std::size_t> reasonCounts, staticCounts, strictCounts, why;
  for (const auto& r : results) {
    for (const auto& f : r.staticFindings) ++(f.strict ? strictCounts : staticCounts)[f.check];
    if (!r.kernelbench) continue;
    ++checked;
    const bool cuset = r.verdict == Verdict::correct;
    if (!r.kernelbench->correct) {
      ++notReproduced;
      continue;
    }
    const bool kernelbench = *r.kernelbench->correct;
    if (kernelbench && cuset)
      ++both;
    else if (kernelbench)
      ++kernelbenchOnly;
    else if (cuset)
      ++cusetOnly;
    else
      ++neither;
    if (kernelbench != cuset) {
      const std::string& disagreement = r.kernelbench->disagreement.empty() ? std::string("unclassified") : r.kernelbench->disagreement;
      ++why[disagreement];
      nlohmann::json row = {{"model", r.model},
                            {"problem", r.problem},
                            {"sample", r.sample},
                            {"verdict", verdictName(r.verdict)},
                            {"reason", kernelbench ? r.reason : r.kernelbench->issue},
                            {"reason_class", reasonClass(r.reason)},
                            {"disagreement", disagreement},
                            {"origin", r.origin}};
      if (kernelbench) {
        ++reasonCounts[std::string(verdictName(r.verdict))];
        passedThereOnly.push_back(std::move(row));
      } else {
        passedHereOnly.push_back(std::move(row));
      }
    }
  }
  if (checked == 0 && staticCounts.empty() && strictCounts.empty()) return nullptr;
  return {{"candidates", checked},
          {"table", {{"both_correct", both}, {"kernelbench_only", kernelbenchOnly}, {"cuset_only", cusetOnly}, {"neither", neither}}},
          {"not_reproduced", notReproduced},
          {"kernelbench_only_verdicts", reasonCounts},
          {"kernelbench_only", passedThereOnly},
          {"cuset_only", passedHereOnly},
          {"disagreements", why},
          {"static_findings", {{"strict", strictCounts}, {"warning", staticCounts}}}};
}

std::string kernelBenchAgreementMarkdown(const nlohmann::json& agreement) {
  if (!agreement.is_object()) return {};
  const auto& t = agreement["table"];
  std::string md = "## KernelBench's check beside CuSeT's\n\n";
  md += fmt::format(
      "KernelBench's own check (its tolerance, its seeded trials, outputs in fresh memory; none of CuSeT's fences, canaries, mutation or "
      "determinism checks) reproduced on {} candidate(s); {} could not be reproduced here.\n\n",
      agreement["candidates"].get<std::size_t>() - agreement["not_reproduced"].get<std::size_t>(), agreement["not_reproduced"].get<std::size_t>());
  md += "| | CuSeT correct | CuSeT not correct |\n|---|---|---|\n";
  md += fmt::format("| **KernelBench correct** | {} | {} |\n", t["both_correct"].get<std::size_t>(), t["kernelbench_only"].get<std::size_t>());
  md += fmt::format("| **KernelBench not correct** | {} | {} |\n\n", t["cuset_only"].get<std::size_t>(), t["neither"].get<std::size_t>());
  if (const auto why = agreement.value("disagreements", nlohmann::json::object()); !why.empty()) {
    md += "### Why the two verdicts differ\n\n| reason | candidates |\n|---|---|\n";
    for (const auto& [reason, n] : why.items()) md += fmt::format("| {} | {} |\n", reason, n.get<std::size_t>());
    md += "\n";
  }
  for (const auto& [key, title] :
       {std::pair{"kernelbench_only", "Passed by KernelBench, not by CuSeT"}, std::pair{"cuset_only", "Passed by CuSeT, not by KernelBench"}}) {
    const auto rows = agreement.value(key, nlohmann::json::array());
    if (rows.empty()) continue;
    md += fmt::format("### {}\n\n| model | problem | sample | CuSeT verdict | why | reason |\n|---|---|---|---|---|---|\n", title);
    for (const auto& row : rows) {
      md += fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", markdownCell(row["model"]), row["problem"].get<std::string>(),
                        row["sample"].get<std::int64_t>(), row["verdict"].get<std::string>(), row.value("disagreement", ""),
                        markdownCell(row["reason"]));
    }
    md += "\n";
  }
  const auto& findings = agreement["static_findings"];
  if (!findings["strict"].empty() || !findings["warning"].empty()) {
    md += "### KernelBench's static checker\n\n| check | strict | candidates |\n|---|---|---|\n";
    for (const char* kind : {"strict", "warning"}) {
      for (const auto& [check, n] : findings[kind].items())
        md += fmt::format("| {} | {} | {} |\n", check, kind == std::string("strict") ? "yes" : "no", n.get<std::size_t>());
    }
    md += "\n";
  }
  return md;
}

}  // namespace cuset
