#include "cuset/reports/leaderboard_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include "cuset/common/json_util.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/run_compare.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/svg_chart.hpp"
#include "leaderboard_format.hpp"
#include "leaderboard_grid.hpp"

using nlohmann::json;

namespace cuset {
namespace leaderboard {
namespace {

constexpr const char* kVerdictOrder[] = {"correct",        "wrong_answer",      "compile_error", "runtime_error", "timeout", "invalid_submission",
                                         "hack_suspected", "sandbox_violation", "compiled",      "unsupported"};

}  // namespace

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

std::string levelName(const json& level) { return "level " + level["level"].get<std::string>(); }

std::string moneyText(const json& row, const char* key) { return row.contains(key) ? fmt::format("{:.4f}", row[key].get<double>()) : "–"; }

std::string perSolvedText(const json& row) {
  if (row.contains("cost_per_solved")) return fmt::format("{:.4f}", row["cost_per_solved"].get<double>());
  if (row.contains("tokens_per_solved")) return fmt::format("{:.0f} tokens", row["tokens_per_solved"].get<double>());
  return "–";
}

namespace {

// The size set the candidates ran at; an empty one is each backend's default.
std::string sizeSetText(const json& info) {
  const std::string sizes = info.value("sizes", "");
  if (!sizes.empty()) return sizes;
  const std::string backend = info.value("backend", "");
  return backend == "sim" ? "small (the sim backend's default)" : backend == "cuda" ? "full (the cuda backend's default)" : "the backend's default";
}

}  // namespace

std::vector<std::string> coversText(const json& l) {
  const json& info = l["info"];
  std::vector<std::string> out;
  const std::string covered = coverageText(l.value("coverage", json()));
  out.push_back(fmt::format("Each model wrote k = {} candidate(s) for each problem{}. {}", l["k"].get<int>(),
                            info.contains("problems") ? " in " + info["problems"].get<std::string>() : "", covered));
  std::string judged = "Every candidate was judged";
  if (l.contains("revision")) judged += " by cuset " + l["revision"].get<std::string>();
  if (info.contains("backend")) {
    const std::string backend = info["backend"].get<std::string>();
    judged += fmt::format(" on the {} backend{}", backend, backend == "sim" ? " (the CPU simulator: verdicts, no speedups)" : "");
  }
  judged += fmt::format(", size set {}", sizeSetText(info));
  if (info.contains("trials")) judged += fmt::format(", {} correctness trial(s) on fresh inputs", info["trials"].get<int>());
  if (info.contains("eval_seed"))
    judged += fmt::format(", evaluation seed {} (every model sees the same inputs)", info["eval_seed"].get<std::int64_t>());
  out.push_back(judged + ".");
  out.push_back(
      fmt::format("pass@1 and pass@{} are unbiased estimates averaged over the problems with at least that many judged samples; a problem "
                  "counts as solved when at least one of its candidates is correct. Problems flagged defective are shown in the grid "
                  "but left out of every rate unless the run counted them.",
                  l["k"].get<int>()));
  out.push_back(l["timing"] == "gpu"
                    ? "Kernels were timed on a GPU against the reference: fast_p is the share of candidates that are correct and more than p "
                      "times as fast; speedups are the best correct candidate's per problem."
                    : "No GPU timing: fast_p and speedups need the cuda backend, so none are shown.");
  const bool library = std::any_of(l["models"].begin(), l["models"].end(), [](const json& r) { return r.contains("library_candidates"); });
  if (library) {
    out.push_back(
        "Candidates that call LibTorch ops beside their kernels count as correct in the all-candidate numbers; the pure-kernel "
        "pass@1 beside them counts only candidates made of kernels alone.");
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> settingsRows(const json& l) {
  const json& info = l["info"];
  std::vector<std::pair<std::string, std::string>> rows;
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (const auto& [key, label] :
       {std::pair{"problems", "problem suite"}, std::pair{"config", "leaderboard config"}, std::pair{"backend", "backend"},
        std::pair{"sizes", "size set"}, std::pair{"trials", "correctness trials"}, std::pair{"eval_seed", "evaluation seed"}}) {
    if (info.contains(key)) rows.emplace_back(label, std::string(key) == "sizes" ? sizeSetText(info) : text(info[key]));
  }
  rows.emplace_back("samples per problem (k)", std::to_string(l["k"].get<int>()));
  rows.emplace_back("timing", l["timing"] == "gpu" ? "GPU (fast_p, speedups)" : "none");
  if (l.contains("revision")) rows.emplace_back("cuset revision", l["revision"].get<std::string>());
  const json suites = l.value("coverage", json::object()).value("suites", json::object());
  for (const auto& [suite, s] : suites.items()) {
    std::string commits;
    for (const auto& c : s.value("commits", json::array())) commits += (commits.empty() ? " @ " : ", ") + c.get<std::string>();
    rows.emplace_back("imported from", fmt::format("{} ({} problems){}", suite, s.value("problems", 0), commits));
  }
  return rows;
}

std::vector<std::string> modelSettings(const json& s) {
  auto field = [&](const char* key) { return s.contains(key) ? (s[key].is_string() ? s[key].get<std::string>() : s[key].dump()) : std::string("–"); };
  return {s.contains("endpoint") ? field("endpoint") : field("checkpoint"),
          field("model"),
          field("prompt"),
          field("temperature"),
          field("top_p"),
          field("max_tokens"),
          field("seed")};
}

std::string cellText(const json& cell) {
  const int n = cell.value("n", 0), c = cell.value("c", 0);
  if (c > 0)
    return cell.contains("best_speedup") ? fmt::format("{:.2f}x · {}/{}", cell["best_speedup"].get<double>(), c, n) : fmt::format("{}/{}", c, n);
  const std::string best = cell.value("best", "");
  return fmt::format("{} · 0/{}", best.empty() ? "none" : best, n);
}

std::vector<std::string> evaluatedModels(const json& l) {
  std::vector<std::string> out;
  for (const auto& row : l["models"]) {
    if (row["evaluated"].get<bool>()) out.push_back(row["model"].get<std::string>());
  }
  return out;
}

std::string headToHeadText(const json& l, const std::string& a, const std::string& b) {
  for (const auto& pair : l.value("head_to_head", json::array())) {
    const bool forward = pair["a"] == a && pair["b"] == b;
    if (!forward && !(pair["a"] == b && pair["b"] == a)) continue;
    std::string text = std::to_string(pair[forward ? "a_only" : "b_only"].size());
    if (pair.contains("speedup_ratio")) {
      const double g = pair["speedup_ratio"]["geomean"].get<double>();
      text += fmt::format(" ({:.2f}x)", forward ? g : 1.0 / g);
    }
    return text;
  }
  return "–";
}

}  // namespace leaderboard

namespace {

using namespace leaderboard;

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

// Per level (KernelBench's levels, or the suite's): each evaluated model's pass@1, pass@k and, when
// timed, fast_1 on that level's problems, models in leaderboard order.
json levelRows(const json& ranked, const std::vector<LeaderboardEntry>& entries, int k) {
  std::map<std::string, json> byLevel;
  for (const auto& row : ranked) {
    if (!row["evaluated"].get<bool>()) continue;
    const auto e = std::find_if(entries.begin(), entries.end(), [&](const LeaderboardEntry& x) { return x.name == row["model"].get<std::string>(); });
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

// Problems solved (at least one correct candidate, flagged problems left out) and what each cost.
void addSolvedCounts(json& ranked, const json& problems) {
  for (auto& row : ranked) {
    if (!row["evaluated"].get<bool>()) continue;
    const std::string model = row["model"].get<std::string>();
    const auto solved = std::count_if(problems.begin(), problems.end(), [&](const json& p) {
      return !p.contains("excluded") && p["cells"].contains(model) && p["cells"][model]["c"].get<int>() > 0;
    });
    row["solved"] = solved;
    if (solved == 0) continue;
    if (row.contains("cost")) row["cost_per_solved"] = row["cost"].get<double>() / static_cast<double>(solved);
    const json& g = row["generation"];
    if (g.contains("completion_tokens")) {
      row["tokens_per_solved"] =
          static_cast<double>(g["prompt_tokens"].get<std::int64_t>() + g["completion_tokens"].get<std::int64_t>()) / static_cast<double>(solved);
    }
  }
}

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
  json out = {{"schema_version", kLeaderboardSchemaVersion},
              {"leaderboard", in.name},
              {"k", in.k},
              {"timing", timed ? "gpu" : "none"},
              {"models", ranked},
              {"regression", regression},
              {"info", in.info}};
  // What the board covers: the first evaluated model's run (every model is judged on the same problems).
  for (const auto& e : in.entries) {
    if (!e.summary.is_null() && e.summary.contains("coverage")) {
      out["coverage"] = e.summary["coverage"];
      break;
    }
  }
  out["levels"] = levelRows(ranked, in.entries, in.k);
  // The revision of cuset that judged them (each model's run records it).
  for (const auto& e : in.entries) {
    if (!e.summary.is_null() && e.summary.contains("run")) {
      const std::string revision = e.summary["run"].value("environment", json::object()).value("git_revision", "");
      if (!revision.empty()) {
        out["revision"] = revision;
        break;
      }
    }
  }
  const std::vector<std::string> evaluated = evaluatedModels(out);
  json grid = leaderboardGrid(in, evaluated);
  if (!grid["problems"].empty()) addSolvedCounts(ranked, grid["problems"]);
  out["models"] = ranked;
  out["head_to_head"] = headToHead(grid["problems"], evaluated);
  for (const char* field : {"problems", "statements", "candidates", "sources"}) out[field] = std::move(grid[field]);
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
  md += fmt::format(
      "| rank | model | pass@1 | pass@{} | correct | solved |{} tokens (prompt + completion) | cost | per solved problem | verdicts |{} report |\n",
      k, timed ? " fast_1 | fast_1.5 | geomean speedup |" : "", compared ? " vs base |" : "");
  md += fmt::format("|---|---|---|---|---|---|{}---|---|---|---|{}---|\n", timed ? "---|---|---|" : "", compared ? "---|" : "");
  for (const auto& row : l["models"]) {
    const bool ev = row["evaluated"].get<bool>();
    std::string timing;
    if (timed) {
      timing = fmt::format(" {} | {} | {} |", fastOr(row, "1"), fastOr(row, "1.5"),
                           row.contains("geomean_speedup") ? fmt::format("{:.2f}x", row["geomean_speedup"].get<double>()) : "–");
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} |{} {} | {} | {} | {} |{} {} |\n", ev ? std::to_string(row["rank"].get<int>()) : "–",
                      row["model"].get<std::string>(), percentOr(row, "pass_at_1"), percentOr(row, "pass_at_k"),
                      ev ? percentOr(row, "correct_rate") : notEvaluated(row),
                      row.contains("solved") ? std::to_string(row["solved"].get<int>()) : "–", timing, tokensText(row["generation"]),
                      moneyText(row, "cost"), perSolvedText(row), sharesText(row), compared ? " " + comparisonText(row) + " |" : "",
                      row.contains("report") ? fmt::format("[report]({})", row["report"].get<std::string>()) : "–");
  }
  for (const auto& row : l["models"]) {
    if (row.contains("library_candidates")) {
      md += fmt::format("\n`{}`: {} candidate(s) run LibTorch ops beside their kernels; pass@1 of pure kernels {}{}.\n",
                        row["model"].get<std::string>(), row["library_candidates"].get<int>(), percentOr(row, "pure_pass_at_1"),
                        row.contains("pure_fast_1") ? ", fast_1 " + percentOr(row, "pure_fast_1") : "");
    }
  }
  md += "\n## What these numbers cover\n\n";
  for (const auto& sentence : coversText(l)) md += sentence + "\n\n";
  md += "| setting | value |\n|---|---|\n";
  for (const auto& [name, value] : settingsRows(l)) md += fmt::format("| {} | {} |\n", name, value);
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
  const std::vector<std::string> evaluated = evaluatedModels(l);
  if (l.contains("problems") && !l["problems"].empty()) {
    md += fmt::format(
        "\n## Problems\n\nEach cell: correct candidates of those judged{}, or the best verdict when none is correct.\n\n| problem | level | solved "
        "by |",
        timed ? " and the best speedup" : "");
    std::string rule = "|---|---|---|";
    for (const auto& m : evaluated) {
      md += " " + m + " |";
      rule += "---|";
    }
    md += "\n" + rule + "\n";
    for (const auto& p : l["problems"]) {
      md += fmt::format("| {}{} | {} | {} |", p["id"].get<std::string>(), p.contains("excluded") ? " (flagged)" : "", p["level"].get<int>(),
                        p["solved_by"].size());
      for (const auto& m : evaluated) md += " " + (p["cells"].contains(m) ? cellText(p["cells"][m]) : std::string("–")) + " |";
      md += "\n";
    }
  }
  if (l.contains("head_to_head") && !l["head_to_head"].empty()) {
    md += "\n## Head to head\n\nProblems the row's model solves and the column's does not";
    md += timed ? "; in brackets, the geometric mean of the row's best speedup over the column's on the problems both solve.\n\n| |" : ".\n\n| |";
    std::string rule = "|---|";
    for (const auto& m : evaluated) {
      md += " " + m + " |";
      rule += "---|";
    }
    md += "\n" + rule + "\n";
    for (const auto& a : evaluated) {
      md += "| " + a + " |";
      for (const auto& b : evaluated) md += " " + headToHeadText(l, a, b) + " |";
      md += "\n";
    }
  }
  md += "\n## Models\n\n| model |";
  std::string rule = "|---|";
  for (const char* column : kModelSettingColumns) {
    md += fmt::format(" {} |", column);
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (const auto& row : l["models"]) {
    md += "| " + row["model"].get<std::string>() + " |";
    for (const auto& v : modelSettings(row["source"])) md += " " + v + " |";
    md += "\n";
  }
  if (l["regression"].get<bool>()) md += "\n**Regression**: at least one model is worse than in the base leaderboard (see each model's report).\n";
  return md;
}

}  // namespace cuset
