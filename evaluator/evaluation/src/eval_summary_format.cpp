#include "cuset/evaluator/evaluation/eval_summary_format.hpp"

#include <fmt/format.h>

#include "cuset/common/text_table.hpp"

namespace cuset {

std::string formatEvalSummary(const EvalRunSummary& summary, std::size_t maxRows) {
  std::string out;
  if (summary.results.size() <= maxRows) {
    TextTable table({"problem", "model", "sample", "verdict", "compile ms", "reason"});
    for (const auto& r : summary.results) {
      table.addRow({r.problem, r.model, std::to_string(r.sample), std::string(verdictName(r.verdict)),
                    fmt::format("{:.1f}{}", r.timings.compileMs, r.compileCacheHit ? " (cached)" : ""), ellipsize(r.reason, 90)});
    }
    out += table.render() + "\n";
  }
  TextTable counts({"verdict", "count"});
  for (Verdict v : kAllVerdicts) {
    if (auto it = summary.counts.find(v); it != summary.counts.end()) counts.addRow({std::string(verdictName(v)), std::to_string(it->second)});
  }
  out += counts.render();
  if (auto it = summary.counts.find(Verdict::unsupported); it != summary.counts.end() && it->second > 0) {
    out += fmt::format("{} unsupported: not judged in this run (outside pass@k and every rate); the reasons say what to run them on\n", it->second);
  }
  out += fmt::format("{} candidate(s): {} evaluated now, {} already done; {:.2f} s\nresults: {}\n", summary.results.size(), summary.evaluatedNow,
                     summary.skippedAsDone, summary.seconds, (summary.runDir / "results.jsonl").string());
  return out;
}

}  // namespace cuset
