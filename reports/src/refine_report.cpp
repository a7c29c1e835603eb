#include "cuset/reports/refine_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/common/json_util.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include <cstdint>

using nlohmann::json;

namespace cuset {
namespace {

std::string verdictsText(const json& verdicts) {
  std::vector<std::string> parts;
  for (const auto& [v, n] : verdicts.items()) parts.push_back(fmt::format("{} {}", v, n.get<int>()));
  return parts.empty() ? "–" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string speedupText(const json& j, const char* key) { return j.contains(key) ? fmt::format("{:.2f}x", j[key].get<double>()) : "–"; }

std::string bestText(const json& p) {
  if (!p.contains("best")) return "none";
  const json& b = p["best"];
  return fmt::format("round {} sample {}{}", b["round"].get<int>(), b["sample"].get<std::int64_t>(),
                     b.contains("speedup") ? fmt::format(", {:.2f}x", b["speedup"].get<double>()) : "");
}

}  // namespace

json computeRefineReport(const json& problems, const json& info) {
  int rounds = 0;
  for (const auto& p : problems) rounds = std::max(rounds, static_cast<int>(p["rounds"].size()));
  // A problem solved in round r counts as solved in every later round (it stops being asked).
  json correctRate = json::array();
  for (int r = 1; r <= rounds; ++r) {
    std::size_t solved = 0;
    for (const auto& p : problems) solved += p.contains("best") && p["best"]["round"].get<int>() <= r;
    correctRate.push_back(
        {{"round", r}, {"solved", solved}, {"rate", problems.empty() ? 0.0 : static_cast<double>(solved) / static_cast<double>(problems.size())}});
  }
  std::vector<double> speedups;
  for (const auto& p : problems) {
    if (p.contains("best") && p["best"].contains("speedup")) speedups.push_back(p["best"]["speedup"].get<double>());
  }
  json suite = {{"problems", problems.size()}, {"correct_rate_after_round", correctRate}, {"timed_best", speedups.size()}};
  if (!speedups.empty()) {
    double sum = 0;
    for (double s : speedups) sum += s;
    suite["mean_speedup"] = sum / static_cast<double>(speedups.size());
    suite["geomean_speedup"] = *geometricMean(speedups);
  }
  return {{"schema_version", kRefineSchemaVersion}, {"suite", suite}, {"problems", problems}, {"info", info}};
}

std::string renderRefineMarkdown(const json& r) {
  const json& s = r["suite"];
  const json& info = r["info"];
  std::string md = fmt::format("# CuSeT refine: {}\n\n", info.value("model", ""));
  md += fmt::format("{} problems; {} requests, {} tokens spent.", s["problems"].get<std::size_t>(), info.value("requests", std::size_t{0}),
                    info.value("tokens", std::int64_t{0}));
  if (s.contains("geomean_speedup")) {
    md += fmt::format(" Best kernels: mean speedup {:.2f}x, geomean {:.2f}x over {} timed.", s["mean_speedup"].get<double>(),
                      s["geomean_speedup"].get<double>(), s["timed_best"].get<std::size_t>());
  }
  md += "\n\n| after round | solved | correct rate |\n|---|---|---|\n";
  for (const auto& c : s["correct_rate_after_round"]) {
    md += fmt::format("| {} | {} | {} |\n", c["round"].get<int>(), c["solved"].get<std::size_t>(), formatPercent(c["rate"].get<double>()));
  }
  md += "\n## Problems\n\n| problem | rounds | verdicts per round | best speedup per round | chosen kernel | stopped |\n|---|---|---|---|---|---|\n";
  for (const auto& p : r["problems"]) {
    std::vector<std::string> verdicts, speedups;
    for (const auto& round : p["rounds"]) {
      verdicts.push_back(fmt::format("{}: {}", round["round"].get<int>(), verdictsText(round["verdicts"])));
      speedups.push_back(speedupText(round, "best_speedup"));
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", p["problem"].get<std::string>(), p["rounds"].size(), fmt::join(verdicts, "; "),
                      fmt::join(speedups, " → "), bestText(p), p["stop"].get<std::string>());
  }
  return md;
}

std::string renderRefineHtml(const json& r) {
  const json& s = r["suite"];
  const json& info = r["info"];
  const std::string model = info.value("model", "");
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)";
  h += fmt::format("<title>CuSeT refine · {}</title><style>{}</style></head><body><main>", htmlEscape(model), simplePageStyle());
  h += fmt::format("<h1>CuSeT refine: {}</h1><p>{} problems · {} requests · {} tokens{}</p>", htmlEscape(model), s["problems"].get<std::size_t>(),
                   info.value("requests", std::size_t{0}), info.value("tokens", std::int64_t{0}),
                   s.contains("geomean_speedup") ? fmt::format(" · best kernels: mean speedup {:.2f}x, geomean {:.2f}x",
                                                               s["mean_speedup"].get<double>(), s["geomean_speedup"].get<double>())
                                                 : std::string(" · no GPU timing"));
  h += "<h2>Correct rate after each round</h2><table><thead><tr><th class=\"num\">round</th><th class=\"num\">solved</th><th class=\"num\">correct "
       "rate</th></tr></thead><tbody>";
  for (const auto& c : s["correct_rate_after_round"]) {
    h += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>", c["round"].get<int>(),
                     c["solved"].get<std::size_t>(), formatPercent(c["rate"].get<double>()));
  }
  h += "</tbody></table><h2>Problems</h2><div class=\"scroll\"><table><thead><tr><th>problem</th><th>round</th><th>verdicts</th><th "
       "class=\"num\">best speedup</th><th>chosen kernel</th><th>stopped</th></tr></thead><tbody>";
  for (const auto& p : r["problems"]) {
    const auto n = p["rounds"].size();
    for (std::size_t i = 0; i < n; ++i) {
      const json& round = p["rounds"][i];
      h += "<tr>";
      if (i == 0) {
        h += fmt::format("<td rowspan=\"{}\"><a href=\"{}\">{}</a></td>", n, htmlEscape(p["transcript"].get<std::string>()),
                         htmlEscape(p["problem"].get<std::string>()));
      }
      h += fmt::format("<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>", round["round"].get<int>(),
                       htmlEscape(verdictsText(round["verdicts"])), speedupText(round, "best_speedup"));
      if (i == 0)
        h += fmt::format("<td rowspan=\"{0}\">{1}</td><td rowspan=\"{0}\">{2}</td>", n, htmlEscape(bestText(p)),
                         htmlEscape(p["stop"].get<std::string>()));
      h += "</tr>";
    }
  }
  h += "</tbody></table></div><h2>Setup</h2><pre>" + htmlEscape(dumpJson(info, 2)) + "</pre></main></body></html>\n";
  return h;
}

}  // namespace cuset
