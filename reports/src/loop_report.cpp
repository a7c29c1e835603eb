#include "cuset/reports/loop_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "cuset/common/json_util.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/svg_chart.hpp"

using nlohmann::json;

namespace cuset {
namespace {

const std::vector<std::string> kSets = {"all", "unseen_instance", "unseen_variant", "unseen_family"};

std::string setLabel(const std::string& set) {
  if (set == "unseen_instance") return "unseen instances";
  if (set == "unseen_variant") return "unseen variants";
  if (set == "unseen_family") return "unseen families";
  return "all held-out";
}

struct Tally {
  std::int64_t n = 0, c = 0;
  std::int64_t fast = 0;  // correct with a GPU speedup > 1
};

// pass@1, pass@k and fast_1 of one run on each set; absent sets are left out.
json runMetrics(const LoopRunInput& run, const LoopComparisonInput& in, bool& timed) {
  std::map<std::string, Tally> perProblem;
  for (const auto& r : run.results) {
    if (!in.problemSet.contains(r.problem)) continue;
    Tally& t = perProblem[r.problem];
    ++t.n;
    if (r.verdict == Verdict::correct) {
      ++t.c;
      if (const auto s = speedupOf(r)) {
        timed = true;
        if (*s > 1.0) ++t.fast;
      }
    }
  }
  json out = json::object();
  for (const auto& set : kSets) {
    double p1 = 0, pk = 0;
    std::int64_t problems = 0, candidates = 0, correct = 0, fast = 0;
    for (const auto& [id, setOf] : in.problemSet) {
      if (set != "all" && setOf != set) continue;
      const auto it = perProblem.find(id);
      const Tally t = it == perProblem.end() ? Tally{} : it->second;
      // A problem without k candidates (an interrupted generation) counts as unsolved, not as absent,
      // so a run cannot look better by losing its hardest problems.
      const std::int64_t n = std::max<std::int64_t>(t.n, in.k);
      p1 += passAtK(n, t.c, 1).value_or(0.0);
      pk += passAtK(n, t.c, in.k).value_or(0.0);
      ++problems;
      candidates += n;
      correct += t.c;
      fast += t.fast;
    }
    if (problems == 0) continue;
    json m = {{"problems", problems},
              {"pass@1", p1 / static_cast<double>(problems)},
              {"pass@k", pk / static_cast<double>(problems)},
              {"correct", correct},
              {"candidates", candidates}};
    m["fast_1"] = static_cast<double>(fast) / static_cast<double>(candidates);
    out[set] = m;
  }
  return out;
}

json spread(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean);
  const double sd = values.size() > 1 ? std::sqrt(var / static_cast<double>(values.size() - 1)) : 0.0;
  return {{"mean", mean},
          {"std", sd},
          {"min", *std::min_element(values.begin(), values.end())},
          {"max", *std::max_element(values.begin(), values.end())},
          {"values", values}};
}

std::string meanStd(const json& s, bool percent) {
  if (s.is_null()) return "–";
  if (percent) return fmt::format("{:.1f} ± {:.1f}%", 100 * s["mean"].get<double>(), 100 * s["std"].get<double>());
  return fmt::format("{:.3f} ± {:.3f}", s["mean"].get<double>(), s["std"].get<double>());
}

const json& at(const json& j, const std::string& a, const std::string& b) {
  static const json null;
  if (!j.contains(a) || !j[a].contains(b)) return null;
  return j[a][b];
}

}  // namespace

json computeLoopComparison(const LoopComparisonInput& in) {
  bool timed = false;
  json runs = json::array();
  std::map<std::string, std::vector<const json*>> byObjective;
  std::vector<json> runJson;
  runJson.reserve(in.runs.size());
  for (const auto& run : in.runs) {
    json r = {{"objective", run.objective}, {"seed", run.seed}, {"dir", run.dir}, {"evaluated", run.evaluated}};
    if (run.evaluated) {
      r["metrics"] = runMetrics(run, in, timed);
      r["report"] = run.dir + "/eval/report.html";
    }
    if (!run.loss.empty()) {
      r["final_loss"] = run.loss.back().second;
      json curve = json::array();
      for (const auto& [step, loss] : run.loss) curve.push_back({step, loss});
      r["loss_curve"] = curve;
    }
    runJson.push_back(std::move(r));
  }
  json objectives = json::array();
  for (const auto& name : in.objectives) {
    json o = {{"name", name}};
    std::vector<std::uint64_t> seeds;
    std::map<std::string, std::map<std::string, std::vector<double>>> values;  // set -> metric -> per seed
    std::vector<double> finalLoss;
    std::map<std::int64_t, std::vector<double>> curve;
    for (const auto& r : runJson) {
      if (r["objective"] != name) continue;
      if (r.contains("final_loss")) finalLoss.push_back(r["final_loss"].get<double>());
      if (r.contains("loss_curve")) {
        for (const auto& p : r["loss_curve"]) curve[p[0].get<std::int64_t>()].push_back(p[1].get<double>());
      }
      if (!r["evaluated"].get<bool>()) continue;
      seeds.push_back(r["seed"].get<std::uint64_t>());
      for (const auto& [set, m] : r["metrics"].items()) {
        for (const char* metric : {"pass@1", "pass@k", "fast_1"}) values[set][metric].push_back(m[metric].get<double>());
      }
    }
    o["seeds"] = seeds;
    json metrics = json::object();
    for (const auto& [set, ms] : values) {
      for (const auto& [metric, v] : ms) {
        if (metric == "fast_1" && !timed) continue;
        metrics[set][metric] = spread(v);
      }
    }
    o["metrics"] = metrics;
    if (!finalLoss.empty()) o["final_loss"] = spread(finalLoss);
    json steps = json::array(), mean = json::array();
    for (const auto& [step, losses] : curve) {
      steps.push_back(step);
      double s = 0;
      for (double l : losses) s += l;
      mean.push_back(s / static_cast<double>(losses.size()));
    }
    if (!steps.empty()) o["loss_curve"] = {{"steps", steps}, {"mean", mean}};
    objectives.push_back(o);
  }
  std::map<std::string, std::int64_t> setSizes;
  for (const auto& [id, set] : in.problemSet) ++setSizes[set];
  return {{"schema_version", kLoopSchemaVersion},
          {"loop", in.name},
          {"k", in.k},
          {"timed", timed},
          {"sets", setSizes},
          {"objectives", objectives},
          {"runs", runJson},
          {"info", in.info}};
}

std::string renderLoopMarkdown(const json& c) {
  const int k = c["k"].get<int>();
  std::string md = fmt::format("# CuSeT loop: {}\n\n", c["loop"].get<std::string>());
  std::vector<std::string> sizes;
  for (const auto& [set, n] : c["sets"].items()) sizes.push_back(fmt::format("{} {}", n.get<int>(), setLabel(set)));
  md += fmt::format("Held-out problems: {}; k = {} samples per problem. Mean ± standard deviation over seeds.\n\n",
                    fmt::format("{}", fmt::join(sizes, ", ")), k);
  const bool timed = c["timed"].get<bool>();
  md += fmt::format(
      "| objective | seeds | pass@1 | pass@{0} | pass@{0} unseen instances | pass@{0} unseen variants | pass@{0} unseen families |{1} final loss |\n",
      k, timed ? " fast_1 |" : "");
  md += fmt::format("|---|---|---|---|---|---|---|{}---|\n", timed ? "---|" : "");
  for (const auto& o : c["objectives"]) {
    const json& m = o["metrics"];
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |{} {} |\n", o["name"].get<std::string>(), o["seeds"].size(),
                      meanStd(at(m, "all", "pass@1"), true), meanStd(at(m, "all", "pass@k"), true), meanStd(at(m, "unseen_instance", "pass@k"), true),
                      meanStd(at(m, "unseen_variant", "pass@k"), true), meanStd(at(m, "unseen_family", "pass@k"), true),
                      timed ? " " + meanStd(at(m, "all", "fast_1"), true) + " |" : "",
                      o.contains("final_loss") ? meanStd(o["final_loss"], false) : "–");
  }
  md += "\n## Runs\n\n| run | seed | pass@1 | pass@k | final loss | report |\n|---|---|---|---|---|---|\n";
  for (const auto& r : c["runs"]) {
    const bool ev = r["evaluated"].get<bool>();
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r["dir"].get<std::string>(), r["seed"].get<std::uint64_t>(),
                      ev ? formatPercent(r["metrics"]["all"]["pass@1"].get<double>()) : "not evaluated",
                      ev ? formatPercent(r["metrics"]["all"]["pass@k"].get<double>()) : "–",
                      r.contains("final_loss") ? fmt::format("{:.3f}", r["final_loss"].get<double>()) : "–",
                      ev ? fmt::format("[report]({})", r["report"].get<std::string>()) : "–");
  }
  return md;
}

std::string renderLoopHtml(const json& c) {
  const int k = c["k"].get<int>();
  const bool timed = c["timed"].get<bool>();
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)";
  h += fmt::format("<title>CuSeT loop · {}</title><style>{}</style></head><body><main>", htmlEscape(c["loop"].get<std::string>()), simplePageStyle());
  std::vector<std::string> sizes;
  for (const auto& [set, n] : c["sets"].items()) sizes.push_back(fmt::format("{} {}", n.get<int>(), setLabel(set)));
  h += fmt::format("<h1>CuSeT loop: {}</h1><p>Held-out problems: {} · k = {} samples per problem · mean ± standard deviation over seeds{}</p>",
                   htmlEscape(c["loop"].get<std::string>()), htmlEscape(fmt::format("{}", fmt::join(sizes, ", "))), k,
                   timed ? " · timed on a GPU" : " · no GPU timing (fast_p needs the cuda backend)");

  h += "<h2>Objectives</h2><div class=\"scroll\"><table><thead><tr><th>objective</th><th class=\"num\">seeds</th>";
  for (const auto& set : kSets)
    h += fmt::format("<th class=\"num\">pass@1 {0}</th><th class=\"num\">pass@{1} {0}</th>", htmlEscape(setLabel(set)), k);
  if (timed) h += "<th class=\"num\">fast_1</th>";
  h += "<th class=\"num\">final loss</th></tr></thead><tbody>";
  for (const auto& o : c["objectives"]) {
    h += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td>", htmlEscape(o["name"].get<std::string>()), o["seeds"].size());
    for (const auto& set : kSets) {
      h += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td>", meanStd(at(o["metrics"], set, "pass@1"), true),
                       meanStd(at(o["metrics"], set, "pass@k"), true));
    }
    if (timed) h += fmt::format("<td class=\"num\">{}</td>", meanStd(at(o["metrics"], "all", "fast_1"), true));
    h += fmt::format("<td class=\"num\">{}</td></tr>", o.contains("final_loss") ? meanStd(o["final_loss"], false) : "–");
  }
  h += "</tbody></table></div>";

  std::vector<ChartSeries> bars;
  for (const auto& o : c["objectives"]) {
    ChartSeries s{o["name"].get<std::string>(), {}};
    for (const auto& set : kSets) {
      const json& v = at(o["metrics"], set, "pass@k");
      s.values.push_back(v.is_null() ? 0.0 : v["mean"].get<double>());
    }
    bars.push_back(s);
  }
  std::vector<std::string> categories;
  for (const auto& set : kSets) categories.push_back(setLabel(set));
  h += "<div class=\"charts\"><figure>" + svgBarChart(categories, bars, 1.0, fmt::format("pass@{} (mean over seeds)", k), true) +
       fmt::format("<figcaption>pass@{} per held-out set</figcaption></figure>", k);
  // Loss curves: one chart per set of objectives that logged the same steps (a warm start's long run
  // and the objectives' short ones differ), thinned to at most 15 points so the axis stays legible.
  std::vector<std::pair<std::vector<double>, std::vector<ChartSeries>>> charts;
  for (const auto& o : c["objectives"]) {
    if (!o.contains("loss_curve") || o["loss_curve"]["steps"].size() < 2) continue;
    std::vector<double> steps;
    for (const auto& st : o["loss_curve"]["steps"]) steps.push_back(st.get<double>());
    ChartSeries series{o["name"].get<std::string>(), o["loss_curve"]["mean"].get<std::vector<double>>()};
    auto it = std::find_if(charts.begin(), charts.end(), [&](const auto& chart) { return chart.first == steps; });
    if (it == charts.end()) {
      charts.push_back({steps, {series}});
    } else {
      it->second.push_back(series);
    }
  }
  for (auto& [steps, lines] : charts) {
    const std::size_t stride = (steps.size() + 14) / 15;
    std::vector<double> xs;
    std::vector<ChartSeries> thinned;
    for (std::size_t i = 0; i < steps.size(); i += stride) xs.push_back(steps[i]);
    double yMax = 0;
    std::vector<std::string> names;
    for (const auto& line : lines) {
      ChartSeries t{line.name, {}};
      for (std::size_t i = 0; i < line.values.size(); i += stride) t.values.push_back(line.values[i]);
      for (double v : t.values) yMax = std::max(yMax, v);
      thinned.push_back(t);
      names.push_back(line.name);
    }
    h += "<figure>" + svgLineChart(xs, thinned, yMax * 1.05, "step", "training loss (mean over seeds)", false) +
         fmt::format("<figcaption>Training curves: {} (each objective's own loss: masked and reweighted for CuSeT)</figcaption></figure>",
                     htmlEscape(fmt::format("{}", fmt::join(names, ", "))));
  }
  h += "</div>";

  h += "<h2>Runs</h2><div class=\"scroll\"><table><thead><tr><th>run</th><th class=\"num\">seed</th>";
  for (const auto& set : kSets) h += fmt::format("<th class=\"num\">pass@{} {}</th>", k, htmlEscape(setLabel(set)));
  h += "<th class=\"num\">final loss</th><th>report</th></tr></thead><tbody>";
  for (const auto& r : c["runs"]) {
    const bool ev = r["evaluated"].get<bool>();
    h += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td>", htmlEscape(r["dir"].get<std::string>()), r["seed"].get<std::uint64_t>());
    for (const auto& set : kSets) {
      const bool has = ev && r["metrics"].contains(set);
      h += fmt::format("<td class=\"num\">{}</td>", has ? formatPercent(r["metrics"][set]["pass@k"].get<double>()) : "–");
    }
    h += fmt::format("<td class=\"num\">{}</td><td>{}</td></tr>",
                     r.contains("final_loss") ? fmt::format("{:.3f}", r["final_loss"].get<double>()) : "–",
                     ev ? fmt::format("<a href=\"{0}\">{0}</a>", htmlEscape(r["report"].get<std::string>())) : "not evaluated yet");
  }
  h += "</tbody></table></div>";
  if (!c["info"].empty()) h += "<h2>Setup</h2><pre>" + htmlEscape(dumpJson(c["info"], 2)) + "</pre>";
  h += "</main></body></html>\n";
  return h;
}

}  // namespace cuset
