#include "cuset/reports/leaderboard_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "cuset/common/json_util.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/run_compare.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/svg_chart.hpp"

using nlohmann::json;

namespace cuset {
namespace {

constexpr const char* kVerdictOrder[] = {"correct", "wrong_answer", "compile_error", "runtime_error", "timeout", "invalid_submission",
                                        "hack_suspected", "sandbox_violation", "compiled", "unsupported"};

json entryRow(const LeaderboardEntry& e, int k) {
  json row = {{"model", e.name}, {"source", e.source}, {"generation", e.generation}, {"evaluated", !e.summary.is_null()}};
  if (!e.report.empty()) row["report"] = e.report;
  if (!e.error.empty()) row["error"] = e.error;
  const auto tokens = [&](const char* key) { return e.generation.value(key, std::int64_t{0}); };
  if (e.promptPricePerMTok || e.completionPricePerMTok) {
    row["cost"] = e.promptPricePerMTok.value_or(0.0) * static_cast<double>(tokens("prompt_tokens")) / 1e6 +
                  e.completionPricePerMTok.value_or(0.0) * static_cast<double>(tokens("completion_tokens")) / 1e6;
  }
  if (e.summary.is_null()) return row;
  const json& models = e.summary["models"];
  const json group = models.contains(e.name) ? models[e.name]["overall"] : json::object();
  row["overall"] = group;
  row["candidates"] = group.value("candidates", 0);
  row["problems"] = group.value("problems", 0);
  row["correct_rate"] = group.value("correct_rate", 0.0);
  for (const auto& [name, key] : {std::pair{"pass_at_1", std::string("1")}, std::pair{"pass_at_k", std::to_string(k)}}) {
    if (const double v = groupMetric(group, "pass_at_k", key.c_str()); v >= 0) row[name] = v;
  }
  if (group.contains("fast_p")) row["fast_p"] = group["fast_p"];
  if (group.contains("geomean_speedup")) row["geomean_speedup"] = group["geomean_speedup"];
  // Correct candidates that run LibTorch ops (a kept nn.Conv2d) count as unsolved here.
  if (models.contains(e.name) && models[e.name].contains("pure_kernel")) {
    const json& pure = models[e.name]["pure_kernel"];
    row["library_candidates"] = pure.value("library_candidates", 0);
    if (const double v = groupMetric(pure, "pass_at_k", "1"); v >= 0) row["pure_pass_at_1"] = v;
    if (const double v = groupMetric(pure, "fast_p", "1"); v >= 0) row["pure_fast_1"] = v;
  }
  json shares = json::object();
  const double n = std::max(1.0, static_cast<double>(group.value("candidates", 0) + group.value("unsupported", 0)));
  const json verdicts = group.value("verdicts", json::object());
  for (const auto& [verdict, count] : verdicts.items()) shares[verdict] = count.get<double>() / n;
  row["verdict_shares"] = shares;
  if (e.summary.contains("comparison")) {
    row["comparison"] = {{"counts", e.summary["comparison"]["counts"]}, {"regression", hasRegression(e.summary["comparison"])}};
  }
  return row;
}

std::string percentOr(const json& row, const char* key) { return row.contains(key) ? formatPercent(row[key].get<double>()) : "–"; }

std::string fastOr(const json& row, const char* p) {
  return row.contains("fast_p") && row["fast_p"].contains(p) ? formatPercent(row["fast_p"][p].get<double>()) : "–";
}

std::string tokensText(const json& g) {
  if (!g.contains("completion_tokens")) return "–";
  const std::string missing = g.value("usage_missing", 0) > 0 ? fmt::format(" ({} unknown)", g["usage_missing"].get<std::int64_t>()) : "";
  return fmt::format("{} + {}{}", g["prompt_tokens"].get<std::int64_t>(), g["completion_tokens"].get<std::int64_t>(), missing);
}

std::string sharesText(const json& row) {
  if (!row.contains("verdict_shares")) return "–";
  std::vector<std::string> parts;
  for (const char* v : kVerdictOrder) {
    if (row["verdict_shares"].contains(v)) parts.push_back(fmt::format("{} {}", v, formatPercent(row["verdict_shares"][v].get<double>())));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string comparisonText(const json& row) {
  if (!row.contains("comparison")) return "–";
  const json& c = row["comparison"]["counts"];
  return fmt::format("{}worse {}, better {}, ambiguous {}, same {}", row["comparison"]["regression"].get<bool>() ? "REGRESSION: " : "",
                     c.value("worse", 0), c.value("better", 0), c.value("ambiguous", 0), c.value("same", 0));
}

std::string notEvaluated(const json& row) { return row.contains("error") ? "failed: " + row["error"].get<std::string>() : "not evaluated"; }

std::string sourceText(const json& s) {
  if (s.contains("endpoint")) return fmt::format("{} @ {}", s.value("model", ""), s.value("endpoint", ""));
  return s.value("checkpoint", "");
}

// Per level (KernelBench's levels, or the suite's): each evaluated model's pass@1, pass@k and, when
// timed, fast_1 on that level's problems, models in leaderboard order.
json levelRows(const json& ranked, const std::vector<LeaderboardEntry>& entries, int k) {
  std::map<std::string, json> byLevel;
  for (const auto& row : ranked) {
    if (!row["evaluated"].get<bool>()) continue;
    const auto e = std::find_if(entries.begin(), entries.end(), [&](const LeaderboardEntry& x) { return x.name == row["model"]; });
    if (e == entries.end() || !e->summary.contains("models") || !e->summary["models"].contains(e->name)) continue;
    const json& model = e->summary["models"][e->name];
    if (!model.contains("levels")) continue;
    for (const auto& [level, group] : model["levels"].items()) {
      json r = {{"model", e->name}, {"problems", group.value("problems", 0)}};
      if (const double v = groupMetric(group, "pass_at_k", "1"); v >= 0) r["pass_at_1"] = v;
      if (const double v = groupMetric(group, "pass_at_k", std::to_string(k).c_str()); v >= 0) r["pass_at_k"] = v;
      if (group.contains("fast_p") && group["fast_p"].contains("1")) r["fast_1"] = group["fast_p"]["1"];
      byLevel[level].push_back(std::move(r));
    }
  }
  json out = json::array();
  for (auto& [level, rows] : byLevel) out.push_back({{"level", level}, {"models", std::move(rows)}});
  return out;
}

std::string levelName(const json& level) { return "level " + level["level"].get<std::string>(); }

}  // namespace

json computeLeaderboard(const LeaderboardInput& in) {
  std::vector<json> rows;
  std::vector<json> groups;
  bool timed = false;
  for (const auto& e : in.entries) {
    rows.push_back(entryRow(e, in.k));
    groups.push_back(rows.back().value("overall", json()));
    timed = timed || rows.back().contains("fast_p");
  }
  json ranked = json::array();
  bool regression = false;
  std::size_t rank = 0;
  // Evaluated models in leaderboard order, then the ones not evaluated yet.
  for (const std::size_t i : leaderboardOrder(groups)) {
    if (!rows[i]["evaluated"].get<bool>()) continue;
    rows[i]["rank"] = ++rank;
    rows[i].erase("overall");
    if (rows[i].contains("comparison")) regression = regression || rows[i]["comparison"]["regression"].get<bool>();
    ranked.push_back(rows[i]);
  }
  for (auto& row : rows) {
    if (!row["evaluated"].get<bool>()) ranked.push_back(row);
  }
  json out = {{"schema_version", kLeaderboardSchemaVersion}, {"leaderboard", in.name}, {"k", in.k}, {"timing", timed ? "gpu" : "none"},
              {"models", ranked}, {"regression", regression}, {"info", in.info}};
  // What the board covers: the first evaluated model's run (every model is judged on the same problems).
  for (const auto& e : in.entries) {
    if (!e.summary.is_null() && e.summary.contains("coverage")) {
      out["coverage"] = e.summary["coverage"];
      break;
    }
  }
  out["levels"] = levelRows(ranked, in.entries, in.k);
  if (!in.compareLabel.empty()) out["compared_with"] = in.compareLabel;
  return out;
}

std::string renderLeaderboardMarkdown(const json& l) {
  const int k = l["k"].get<int>();
  const bool timed = l["timing"] == "gpu";
  const bool compared = l.contains("compared_with");
  std::string md = fmt::format("# CuSeT leaderboard: {}\n\n", l["leaderboard"].get<std::string>());
  md += fmt::format("k = {} samples per problem{}{}.\n\n", k, timed ? ", timed on a GPU" : ", no GPU timing (fast_p needs the cuda backend)",
                    compared ? fmt::format(", compared with {}", l["compared_with"].get<std::string>()) : "");
  if (const std::string covered = coverageText(l.value("coverage", json())); !covered.empty()) md += covered + "\n\n";
  md += fmt::format("| rank | model | pass@1 | pass@{} | correct |{} tokens (prompt + completion) | cost | verdicts |{} report |\n", k,
                    timed ? " fast_1 | fast_1.5 | geomean speedup |" : "", compared ? " vs base |" : "");
  md += fmt::format("|---|---|---|---|---|{}---|---|---|{}---|\n", timed ? "---|---|---|" : "", compared ? "---|" : "");
  for (const auto& row : l["models"]) {
    const bool ev = row["evaluated"].get<bool>();
    std::string timing;
    if (timed) {
      timing = fmt::format(" {} | {} | {} |", fastOr(row, "1"), fastOr(row, "1.5"),
                           row.contains("geomean_speedup") ? fmt::format("{:.2f}x", row["geomean_speedup"].get<double>()) : "–");
    }
    md += fmt::format("| {} | {} | {} | {} | {} |{} {} | {} | {} |{} {} |\n", ev ? std::to_string(row["rank"].get<int>()) : "–",
                      row["model"].get<std::string>(), percentOr(row, "pass_at_1"), percentOr(row, "pass_at_k"), ev ? percentOr(row, "correct_rate") : notEvaluated(row),
                      timing, tokensText(row["generation"]), row.contains("cost") ? fmt::format("{:.4f}", row["cost"].get<double>()) : "–", sharesText(row),
                      compared ? " " + comparisonText(row) + " |" : "", row.contains("report") ? fmt::format("[report]({})", row["report"].get<std::string>()) : "–");
  }
  for (const auto& row : l["models"]) {
    if (row.contains("library_candidates")) {
      md += fmt::format("\n`{}`: {} candidate(s) run LibTorch ops beside their kernels; pass@1 of pure kernels {}{}.\n", row["model"].get<std::string>(),
                        row["library_candidates"].get<int>(), percentOr(row, "pure_pass_at_1"),
                        row.contains("pure_fast_1") ? ", fast_1 " + percentOr(row, "pure_fast_1") : "");
    }
  }
  if (l.contains("levels") && !l["levels"].empty()) {
    md += fmt::format("\n## Per level\n\n| level | model | problems | pass@1 | pass@{} |{}\n|---|---|---|---|---|{}\n", k, timed ? " fast_1 |" : "",
                      timed ? "---|" : "");
    for (const auto& level : l["levels"]) {
      for (const auto& row : level["models"]) {
        md += fmt::format("| {} | {} | {} | {} | {} |{}\n", levelName(level), row["model"].get<std::string>(), row["problems"].get<int>(),
                          percentOr(row, "pass_at_1"), percentOr(row, "pass_at_k"), timed ? " " + percentOr(row, "fast_1") + " |" : "");
      }
    }
  }
  md += "\n## Models\n\n";
  for (const auto& row : l["models"]) md += fmt::format("- **{}**: {} ({})\n", row["model"].get<std::string>(), sourceText(row["source"]), dumpJson(row["source"]));
  if (l["regression"].get<bool>()) md += "\n**Regression**: at least one model is worse than in the base leaderboard (see each model's report).\n";
  return md;
}

std::string renderLeaderboardHtml(const json& l) {
  const int k = l["k"].get<int>();
  const bool timed = l["timing"] == "gpu";
  const bool compared = l.contains("compared_with");
  const std::string name = l["leaderboard"].get<std::string>();
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)";
  h += fmt::format("<title>CuSeT leaderboard · {}</title><style>{}</style></head><body><main>", htmlEscape(name), simplePageStyle());
  h += fmt::format("<h1>CuSeT leaderboard: {}</h1><p>k = {} samples per problem · {}{}</p>", htmlEscape(name), k,
                   timed ? "timed on a GPU" : "no GPU timing (fast_p needs the cuda backend)",
                   compared ? " · compared with " + htmlEscape(l["compared_with"].get<std::string>()) : "");
  if (l["regression"].get<bool>()) h += "<p><strong>Regression</strong>: at least one model is worse than in the base leaderboard.</p>";
  if (const std::string covered = coverageText(l.value("coverage", json())); !covered.empty()) h += "<p id=\"coverage\">" + htmlEscape(covered) + "</p>";
  h += fmt::format("<div class=\"scroll\"><table><thead><tr><th class=\"num\">rank</th><th>model</th><th class=\"num\">pass@1</th><th class=\"num\">pass@{}</th>"
                   "<th class=\"num\">correct</th>",
                   k);
  if (timed) h += "<th class=\"num\">fast_1</th><th class=\"num\">fast_1.5</th><th class=\"num\">geomean speedup</th>";
  h += "<th class=\"num\">tokens (prompt + completion)</th><th class=\"num\">cost</th><th>verdicts</th>";
  if (compared) h += "<th>vs base</th>";
  h += "<th>report</th></tr></thead><tbody>";
  for (const auto& row : l["models"]) {
    const bool ev = row["evaluated"].get<bool>();
    h += fmt::format("<tr><td class=\"num\">{}</td><td title=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
                     ev ? std::to_string(row["rank"].get<int>()) : "–", htmlEscape(sourceText(row["source"])), htmlEscape(row["model"].get<std::string>()),
                     percentOr(row, "pass_at_1"), percentOr(row, "pass_at_k"), ev ? percentOr(row, "correct_rate") : htmlEscape(notEvaluated(row)));
    if (timed) {
      h += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", fastOr(row, "1"), fastOr(row, "1.5"),
                       row.contains("geomean_speedup") ? fmt::format("{:.2f}x", row["geomean_speedup"].get<double>()) : "–");
    }
    h += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>", htmlEscape(tokensText(row["generation"])),
                     row.contains("cost") ? fmt::format("{:.4f}", row["cost"].get<double>()) : "–", htmlEscape(sharesText(row)));
    if (compared) h += "<td>" + htmlEscape(comparisonText(row)) + "</td>";
    h += fmt::format("<td>{}</td></tr>", row.contains("report") ? fmt::format("<a href=\"{0}\">{0}</a>", htmlEscape(row["report"].get<std::string>())) : "–");
  }
  h += "</tbody></table></div>";
  for (const auto& row : l["models"]) {
    if (!row.contains("library_candidates")) continue;
    h += fmt::format("<p><b>{}</b>: {} candidate(s) run LibTorch ops beside their kernels; pass@1 of pure kernels {}{}.</p>",
                     htmlEscape(row["model"].get<std::string>()), row["library_candidates"].get<int>(), percentOr(row, "pure_pass_at_1"),
                     row.contains("pure_fast_1") ? ", fast_1 " + percentOr(row, "pure_fast_1") : "");
  }
  if (l.contains("levels") && !l["levels"].empty()) {
    // A table and a chart of pass@1 per level, one bar per model.
    h += fmt::format("<h2>Per level</h2><div class=\"scroll\"><table id=\"levels\"><thead><tr><th>level</th><th>model</th><th class=\"num\">problems</th>"
                     "<th class=\"num\">pass@1</th><th class=\"num\">pass@{}</th>{}</tr></thead><tbody>",
                     k, timed ? "<th class=\"num\">fast_1</th>" : "");
    std::vector<std::string> categories;
    std::map<std::string, std::vector<double>> passByModel;
    std::vector<std::string> modelOrder;
    for (const auto& level : l["levels"]) {
      categories.push_back(levelName(level));
      for (const auto& row : level["models"]) {
        const std::string model = row["model"].get<std::string>();
        h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>",
                         htmlEscape(levelName(level)), htmlEscape(model), row["problems"].get<int>(), percentOr(row, "pass_at_1"),
                         percentOr(row, "pass_at_k"), timed ? "<td class=\"num\">" + percentOr(row, "fast_1") + "</td>" : "");
        if (!passByModel.contains(model)) modelOrder.push_back(model);
        auto& values = passByModel[model];
        values.resize(categories.size() - 1, 0.0);
        values.push_back(row.value("pass_at_1", 0.0));
      }
    }
    h += "</tbody></table></div>";
    std::vector<ChartSeries> series;
    for (const auto& model : modelOrder) {
      auto values = passByModel[model];
      values.resize(categories.size(), 0.0);
      series.push_back({model, values});
    }
    h += "<figure id=\"levels-chart\">" + svgBarChart(categories, series, 1.0, "pass@1", true) + "<figcaption>pass@1 per level</figcaption></figure>";
  }
  h += "<h2>Models</h2><div class=\"scroll\"><table><thead><tr><th>model</th><th>source</th><th>settings</th></tr></thead><tbody>";
  for (const auto& row : l["models"]) {
    h += fmt::format("<tr><td>{}</td><td>{}</td><td><code>{}</code></td></tr>", htmlEscape(row["model"].get<std::string>()),
                     htmlEscape(sourceText(row["source"])), htmlEscape(dumpJson(row["source"])));
  }
  h += "</tbody></table></div>";
  if (!l["info"].empty()) h += "<h2>Setup</h2><pre>" + htmlEscape(dumpJson(l["info"], 2)) + "</pre>";
  h += "</main></body></html>\n";
  return h;
}

}  // namespace cuset
