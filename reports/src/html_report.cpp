#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>

#include "cuset/common/json_util.hpp"
#include "cuset/common/text_table.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/svg_chart.hpp"
#include "web_assets.hpp"

namespace cuset {
namespace {

std::string esc(const std::string& s) { return htmlEscape(s); }
std::string esc(const nlohmann::json& j) { return htmlEscape(j.is_string() ? j.get<std::string>() : dumpJson(j)); }

// Inline <script>/<style> content must not contain its own closing tag.
std::string inlineSafe(const std::string& text, const char* tag) {
  std::string out = text;
  const std::string closing = std::string("</") + tag;
  for (std::size_t pos = 0; (pos = out.find(closing, pos)) != std::string::npos; pos += 2) out.replace(pos, 2, "<\\/");
  return out;
}

std::string percentOr(const nlohmann::json& obj, const std::string& key) {
  if (!obj.contains(key)) return "-";
  const auto& v = obj[key];
  return formatPercent(v.is_object() ? v["value"].get<double>() : v.get<double>());
}

std::string manifestOf(const std::string& source) {
  const std::size_t begin = source.find("/*@cuset");
  if (begin == std::string::npos) return "";
  const std::size_t end = source.find("*/", begin);
  return source.substr(begin, end == std::string::npos ? std::string::npos : end + 2 - begin);
}

std::string levelLabel(const std::string& level) { return level == "0" ? "other" : "level " + level; }

std::string anchorFor(std::size_t index) { return fmt::format("cand-{}", index); }

std::string passAtKSection(const nlohmann::json& models) {
  std::string h = R"h(<section id="pass-at-k"><h2>pass@k by level</h2>)h";
  for (const auto& [model, m] : models.items()) {
    const std::vector<int> ks = passAtKColumns(m);
    std::vector<std::string> categories;
    std::vector<ChartSeries> series;
    std::string header;
    for (int k : ks) {
      series.push_back({fmt::format("pass@{}", k), {}});
      header += fmt::format(R"h(<th class="num">pass@{}</th>)h", k);
    }
    h += fmt::format(
        R"h(<h3>{}</h3><div class="charts"><div class="scroll"><table><thead><tr><th>level</th><th class="num">problems</th><th class="num">candidates</th><th class="num">correct</th>{}</tr></thead><tbody>)h",
        esc(model), header);
    auto row = [&](const std::string& label, const nlohmann::json& g) {
      h += fmt::format(R"h(<tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>)h", label, g["problems"].get<int>(),
                       g["candidates"].get<int>(), formatPercent(g["correct_rate"]));
      for (int k : ks) h += fmt::format(R"h(<td class="num">{}</td>)h", percentOr(g["pass_at_k"], std::to_string(k)));
      h += "</tr>";
    };
    for (const auto& [level, g] : m["levels"].items()) {
      row(levelLabel(level), g);
      categories.push_back(levelLabel(level));
      for (std::size_t i = 0; i < ks.size(); ++i) {
        const std::string k = std::to_string(ks[i]);
        series[i].values.push_back(g["pass_at_k"].contains(k) ? g["pass_at_k"][k]["value"].get<double>() : NAN);
      }
    }
    row("<b>all</b>", m["overall"]);
    // Candidates that run LibTorch ops beside their kernels are no kernels of the model's.
    if (m.contains("pure_kernel")) row("<b>pure kernels</b>", m["pure_kernel"]);
    std::string samples;
    if (m.contains("samples_per_problem")) {
      const auto& spp = m["samples_per_problem"];
      samples = spp["min"] == spp["max"]
                    ? fmt::format(" {} samples per problem.", spp["min"].get<std::int64_t>())
                    : fmt::format(" {}&ndash;{} samples per problem.", spp["min"].get<std::int64_t>(), spp["max"].get<std::int64_t>());
    }
    h += "</tbody></table></div><figure>" + svgBarChart(categories, series, 1.0, "pass@k", true) +
         "<figcaption>Unbiased pass@k per level (k shown only where every counted problem has n &ge; k samples)." + samples +
         "</figcaption></figure></div>";
  }
  return h + "</section>";
}

std::string timingSections(const nlohmann::json& summary, const std::vector<EvalResult>& results) {
  const auto& models = summary["models"];
  if (summary.value("timing", "none") != "gpu") {
    return R"h(<section id="fast-p"><h2>fast_p and speedups</h2><p class="notice">This run has no GPU timing (backend )h" +
           esc(summary["run"].value("backend", "?")) +
           R"h(). fast_p and speedups need kernels timed against the reference on a GPU (the <code>cuda</code> backend); CPU-simulator times are never reported as speedups.</p></section>)h";
  }
  std::vector<double> ps(std::begin(kFastP), std::end(kFastP));
  std::vector<ChartSeries> fast, speed;
  for (const auto& [model, m] : models.items()) {
    ChartSeries s{model, {}};
    for (double p : ps) s.values.push_back(m["overall"]["fast_p"].value(fmt::format("{}", p), 0.0));
    fast.push_back(std::move(s));
    ChartSeries sp{model, {}};
    for (const auto& r : results) {
      if (r.model != model) continue;
      if (auto x = speedupOf(r)) sp.values.push_back(*x);
    }
    speed.push_back(std::move(sp));
  }
  std::string h = R"h(<section id="fast-p"><h2>fast_p over p</h2><div class="charts"><figure>)h" +
                  svgLineChart(ps, fast, 1.0, "speedup threshold p", "fast_p", true) +
                  "<figcaption>Share of all candidates that are correct and faster than p times the reference.</figcaption></figure>";
  h += R"h(<div class="scroll"><table><thead><tr><th>model</th>)h";
  for (double p : ps) h += fmt::format(R"h(<th class="num">fast_{:g}</th>)h", p);
  h += R"h(<th class="num">geomean speedup</th></tr></thead><tbody>)h";
  for (const auto& [model, m] : models.items()) {
    h += "<tr><td>" + esc(model) + "</td>";
    for (double p : ps) h += fmt::format(R"h(<td class="num">{}</td>)h", formatPercent(m["overall"]["fast_p"].value(fmt::format("{}", p), 0.0)));
    h += fmt::format(R"h(<td class="num">{}</td></tr>)h",
                     m["overall"].contains("geomean_speedup") ? fmt::format("{:.2f}x", m["overall"]["geomean_speedup"].get<double>()) : "-");
  }
  h += "</tbody></table></div></div></section>";
  h += R"h(<section id="speedup"><h2>Speedup distribution</h2><figure>)h" + svgLogHistogram(speed, "speedup over the reference") +
       "<figcaption>Correct candidates timed on the GPU, by speedup (log scale).</figcaption></figure></section>";
  return h;
}

std::string verdictSection(const nlohmann::json& models) {
  std::string h = R"h(<section id="verdicts"><h2>Verdicts</h2>)h";
  std::vector<std::string> verdicts;
  for (Verdict v : kAllVerdicts) verdicts.emplace_back(verdictName(v));
  std::vector<std::string> present;
  for (const auto& v : verdicts) {
    for (const auto& [model, m] : models.items()) {
      if (m["overall"]["verdicts"].contains(v)) {
        present.push_back(v);
        break;
      }
    }
  }
  std::vector<ChartSeries> series;
  h += R"h(<div class="charts"><div class="scroll"><table><thead><tr><th>verdict</th>)h";
  for (const auto& [model, m] : models.items()) {
    h += fmt::format(R"h(<th class="num">{}</th>)h", esc(model));
    ChartSeries s{model, {}};
    const double total = m["overall"]["candidates"].get<double>();
    for (const auto& v : present) s.values.push_back(total > 0 ? m["overall"]["verdicts"].value(v, 0) / total : 0.0);
    series.push_back(std::move(s));
  }
  h += "</tr></thead><tbody>";
  for (const auto& v : present) {
    h += fmt::format(R"h(<tr><td class="v-{}">{}</td>)h", v, v);
    for (const auto& [model, m] : models.items()) h += fmt::format(R"h(<td class="num">{}</td>)h", m["overall"]["verdicts"].value(v, 0));
    h += "</tr>";
  }
  h += "</tbody></table></div><figure>" + svgBarChart(present, series, 1.0, "share of candidates", true) + "</figure></div>";
  h +=
      R"h(<h3>Most frequent reasons</h3><div class="scroll"><table><thead><tr><th>model</th><th>verdict</th><th class="num">count</th><th>reason (numbers normalised)</th></tr></thead><tbody>)h";
  for (const auto& [model, m] : models.items()) {
    for (const auto& [v, reasons] : m["overall"]["top_reasons"].items()) {
      for (const auto& r : reasons) {
        h += fmt::format(R"h(<tr><td>{}</td><td class="v-{}">{}</td><td class="num">{}</td><td>{}</td></tr>)h", esc(model), v, v,
                         r["count"].get<int>(), esc(r["reason"]));
      }
    }
  }
  return h + "</tbody></table></div></section>";
}

// KernelBench's check beside CuSeT's: the 2 x 2 table and what KernelBench passes that CuSeT does not.
std::string kernelBenchSection(const nlohmann::json& summary) {
  const auto& a = summary.value("kernelbench_agreement", nlohmann::json());
  if (!a.is_object()) return "";
  const auto& t = a["table"];
  std::string h = R"h(<section id="kernelbench"><h2>KernelBench's check beside CuSeT's</h2>)h";
  h += fmt::format(
      R"h(<p>KernelBench's own check (its tolerance, its seeded trials, outputs in fresh memory, none of CuSeT's fences, canaries, mutation or determinism checks) reproduced on {} candidate(s); {} not reproducible here.</p>)h",
      a["candidates"].get<std::size_t>() - a["not_reproduced"].get<std::size_t>(), a["not_reproduced"].get<std::size_t>());
  h += fmt::format(
      R"h(<table><thead><tr><th></th><th class="num">CuSeT correct</th><th class="num">CuSeT not correct</th></tr></thead><tbody><tr><th>KernelBench correct</th><td class="num">{}</td><td class="num">{}</td></tr><tr><th>KernelBench not correct</th><td class="num">{}</td><td class="num">{}</td></tr></tbody></table>)h",
      t["both_correct"].get<std::size_t>(), t["kernelbench_only"].get<std::size_t>(), t["cuset_only"].get<std::size_t>(),
      t["neither"].get<std::size_t>());
  if (const auto why = a.value("disagreements", nlohmann::json::object()); !why.empty()) {
    h += R"h(<h3>Why the two verdicts differ</h3><table><thead><tr><th>reason</th><th class="num">candidates</th></tr></thead><tbody>)h";
    for (const auto& [reason, n] : why.items())
      h += fmt::format(R"h(<tr><td>{}</td><td class="num">{}</td></tr>)h", esc(reason), n.get<std::size_t>());
    h += "</tbody></table>";
  }
  for (const auto& [key, title] :
       {std::pair{"kernelbench_only", "Passed by KernelBench, not by CuSeT"}, std::pair{"cuset_only", "Passed by CuSeT, not by KernelBench"}}) {
    const auto rows = a.value(key, nlohmann::json::array());
    if (rows.empty()) continue;
    h += fmt::format(
        R"h(<h3>{}</h3><div class="scroll"><table class="sortable"><thead><tr><th>model</th><th>problem</th><th class="num">sample</th><th>CuSeT verdict</th><th>why</th><th>reason</th></tr></thead><tbody>)h",
        title);
    for (const auto& row : rows) {
      h += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", esc(row["model"]),
                       esc(row["problem"]), row["sample"].get<std::int64_t>(), esc(row["verdict"]), esc(row.value("disagreement", "")),
                       esc(row["reason"]));
    }
    h += "</tbody></table></div>";
  }
  return h + "</section>";
}

std::string comparisonSection(const nlohmann::json& summary) {
  if (!summary.contains("comparison")) return "";
  const auto& cmp = summary["comparison"];
  const auto& c = cmp["counts"];
  std::string h = fmt::format(
      R"h(<section id="comparison"><h2>Comparison with {}</h2><p><span class="s-worse">worse {}</span> · <span class="s-ambiguous">ambiguous {}</span> · <span class="s-better">better {}</span> · same {} · new {} · <span class="s-missing">missing {}</span> · <span class="s-not_judged">not judged {}</span></p>)h",
      esc(cmp["base"]), c["worse"].get<int>(), c["ambiguous"].get<int>(), c["better"].get<int>(), c["same"].get<int>(), c["new"].get<int>(),
      c["missing"].get<int>(), c.value("not_judged", 0));
  h +=
      R"h(<div class="filters" data-table="comparison-table"><input type="search" placeholder="filter comparisons" aria-label="filter comparisons"><select name="status" aria-label="status"><option value="">any status</option><option>worse</option><option>ambiguous</option><option>better</option><option>same</option><option>new</option><option>missing</option><option>not_judged</option></select><span class="count"></span></div>)h";
  h +=
      R"h(<div class="scroll"><table id="comparison-table" class="sortable"><thead><tr><th>status</th><th>model</th><th>problem</th><th class="num">base</th><th class="num">now</th><th class="num">time change</th><th>why</th></tr></thead><tbody>)h";
  for (const auto& row : cmp["rows"]) {
    const std::string status = row["status"];
    std::string base = "-", now = "-", change = "-";
    if (row.contains("correctness")) {
      base = row["correctness"]["base"];
      now = row["correctness"]["current"];
    }
    if (row.contains("timing")) change = fmt::format("{:+.1f}%", 100 * row["timing"]["change"].get<double>());
    h += fmt::format(
        R"h(<tr data-status="{}"><td class="s-{}">{}</td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td></tr>)h",
        status, status, status, esc(row["model"]), esc(row["problem"]), base, now, change, esc(row.value("why", "")));
  }
  return h + "</tbody></table></div></section>";
}

std::string problemsSection(const nlohmann::json& summary, const std::vector<EvalResult>& results) {
  const bool gpu = summary.value("timing", "none") == "gpu";
  // First candidate index per (model, problem), to link a problem row to its candidates.
  std::map<std::pair<std::string, std::string>, std::size_t> first;
  for (std::size_t i = 0; i < results.size(); ++i) first.try_emplace({results[i].model, results[i].problem}, i);
  std::string h = R"h(<section id="problems"><h2>Problems</h2>)h";
  h +=
      R"h(<div class="filters" data-table="problems-table"><input type="search" placeholder="filter problems (id, model, verdict...)" aria-label="filter problems"><select name="level" aria-label="level"><option value="">any level</option>)h";
  std::map<std::string, bool> levels;
  for (const auto& [model, m] : summary["models"].items()) {
    for (const auto& [id, p] : m["problems"].items()) levels[std::to_string(p["level"].get<int>())] = true;
  }
  for (const auto& [level, _] : levels) h += fmt::format(R"h(<option value="{}">{}</option>)h", level, levelLabel(level));
  h +=
      R"h(</select><select name="solved" aria-label="solved"><option value="">solved or not</option><option value="yes">solved</option><option value="no">unsolved</option></select><span class="count"></span></div>)h";
  h +=
      R"h(<div class="scroll"><table id="problems-table" class="sortable"><thead><tr><th>problem</th><th>model</th><th class="num">level</th><th class="num">n</th><th class="num">correct</th><th class="num">pass@1</th>)h";
  if (gpu) h += R"h(<th class="num">best speedup</th>)h";
  h += R"h(<th class="hide-narrow">verdicts</th></tr></thead><tbody>)h";
  for (const auto& [model, m] : summary["models"].items()) {
    for (const auto& [id, p] : m["problems"].items()) {
      std::string verdicts;
      for (const auto& [v, n] : p["verdicts"].items())
        verdicts += fmt::format(R"h({}<span class="v-{}">{}</span> {})h", verdicts.empty() ? "" : ", ", v, v, n.get<int>());
      const auto link = first.find({model, id});
      std::string name = link == first.end() ? esc(id) : fmt::format(R"h(<a href="#{}">{}</a>)h", anchorFor(link->second), esc(id));
      if (p.contains("origin")) name += fmt::format(R"h(<br><small class="origin">{}</small>)h", esc(originText(p["origin"])));
      const double pass1 = p["pass_at_k"].value("1", 0.0);
      h += fmt::format(
          R"h(<tr data-level="{}" data-solved="{}"><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num" data-sort="{}">{}</td>)h",
          p["level"].get<int>(), p["c"].get<int>() > 0 ? "yes" : "no", name, esc(model), p["level"].get<int>(), p["n"].get<int>(), p["c"].get<int>(),
          pass1, formatPercent(pass1));
      if (gpu) {
        const double best = p.value("best_speedup", 0.0);
        h += fmt::format(R"h(<td class="num" data-sort="{}">{}</td>)h", best, best > 0 ? fmt::format("{:.2f}x", best) : "-");
      }
      h += "<td class=\"hide-narrow\">" + verdicts + "</td></tr>";
    }
  }
  return h + "</tbody></table></div></section>";
}

std::string candidateDetail(const EvalResult& r, std::size_t index) {
  std::string h =
      fmt::format(R"h(<details class="cand" id="{}"><summary><span class="v-{}">{}</span> · {} · {} · sample {}</summary><div><dl class="kv">)h",
                  anchorFor(index), verdictName(r.verdict), verdictName(r.verdict), esc(r.problem), esc(r.model), r.sample);
  if (!r.reason.empty()) h += "<dt>reason</dt><dd>" + esc(r.reason) + "</dd>";
  h += "<dt>origin</dt><dd>" + esc(r.origin) + "</dd>";
  if (!r.form.empty())
    h += "<dt>form</dt><dd>" + esc(std::string(r.form == "kernelbench" ? "KernelBench solution (ModelNew + load_inline)" : "/*@cuset manifest")) +
         "</dd>";
  if (!r.libraryOps.empty()) {
    std::string ops;
    for (const auto& op : r.libraryOps) ops += (ops.empty() ? "" : ", ") + esc(op);
    h += "<dt>library ops</dt><dd class=\"flag\">" + ops + " (LibTorch, run and timed with the kernels; not a pure kernel)</dd>";
  }
  h += fmt::format("<dt>backend</dt><dd>{}</dd><dt>source hash</dt><dd>{}</dd>", esc(r.backend), esc(r.sourceHash));
  h += fmt::format("<dt>stage times</dt><dd>{} {:.1f} ms · NVRTC {:.1f} ms{} · host compile {:.1f} ms · run {:.1f} ms · total {:.1f} ms</dd>",
                   r.form == "kernelbench" ? "translation" : "manifest", r.form == "kernelbench" ? r.timings.translateMs : r.timings.manifestMs,
                   r.timings.compileMs, r.compileCacheHit ? " (cached)" : "", r.timings.simCompileMs, r.timings.runMs, r.timings.totalMs);
  if (r.trials > 0)
    h += fmt::format("<dt>trials</dt><dd>{}{}</dd>", r.trials, r.nondeterministic ? " (rerun differed bitwise, within tolerance)" : "");
  if (!r.timingKind.empty()) {
    std::string samples;
    for (double s : r.timingSamplesMs) samples += fmt::format("{}{:.4g}", samples.empty() ? "" : ", ", s);
    h += fmt::format("<dt>timing ({})</dt><dd>median {:.4g} ms over {} samples: {}</dd>", esc(r.timingKind), medianOf(r.timingSamplesMs),
                     r.timingSamplesMs.size(), samples);
    if (!r.referenceTimingSamplesMs.empty()) h += fmt::format("<dt>reference</dt><dd>median {:.4g} ms</dd>", medianOf(r.referenceTimingSamplesMs));
    if (auto s = speedupOf(r)) h += fmt::format("<dt>speedup</dt><dd>{:.3f}x</dd>", *s);
    if (r.peakFraction) h += fmt::format("<dt>peak fraction</dt><dd>{:.1f}% of the speed-of-light bound</dd>", 100.0 * *r.peakFraction);
    if (!r.kernelbenchTimingSamplesMs.empty()) {
      // KernelBench's own measurement of the same iterations, beside CuSeT's (--kernelbench-timing).
      std::string kb = fmt::format("mean {:.4g} ms over {} trials ({:.3f}x CuSeT's median)", meanOf(r.kernelbenchTimingSamplesMs),
                                   r.kernelbenchTimingSamplesMs.size(), meanOf(r.kernelbenchTimingSamplesMs) / medianOf(r.timingSamplesMs));
      if (!r.kernelbenchReferenceTimingSamplesMs.empty())
        kb += fmt::format("; reference mean {:.4g} ms", meanOf(r.kernelbenchReferenceTimingSamplesMs));
      if (auto s = kernelbenchSpeedupOf(r)) kb += fmt::format("; speedup {:.3f}x", *s);
      h += fmt::format("<dt>KernelBench's timing (cuda_event)</dt><dd>{}</dd>", kb);
    }
    for (const auto& f : r.flags) h += fmt::format("<dt>flag</dt><dd class=\"flag\">{}</dd>", esc(f));
  }
  h += "</dl>";
  if (!r.comparisons.empty()) {
    h +=
        R"h(<div class="scroll"><table><thead><tr><th>output</th><th class="num">elements</th><th class="num">mismatches</th><th class="num">max abs err</th><th class="num">max rel err</th><th class="num">tolerance used</th><th>first mismatch</th></tr></thead><tbody>)h";
    for (const auto& c : r.comparisons) {
      std::string at;
      for (auto i : c.firstMismatchIndex) at += fmt::format("{}{}", at.empty() ? "" : ", ", i);
      h += fmt::format(
          R"h(<tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{:.3g}</td><td class="num">{:.3g}</td><td class="num">{:.0f}%</td><td>{}</td></tr>)h",
          esc(c.output), c.elements, c.mismatches, c.maxAbsError, c.maxRelError, 100.0 * c.toleranceUse,
          c.firstMismatch < 0 ? "-" : fmt::format("[{}]: got {:.7g}, want {:.7g}", at, c.firstGot, c.firstWant));
    }
    h += "</tbody></table></div>";
  }
  const std::string manifest = manifestOf(r.source);
  if (!manifest.empty()) h += "<h4>Launch manifest</h4><pre>" + esc(manifest) + "</pre>";
  h += "<h4>Source</h4><pre><code class=\"language-cpp\">" + esc(r.source) + "</code></pre>";
  if (!r.compileLog.empty()) h += "<h4>Compile log</h4><pre>" + esc(r.compileLog) + "</pre>";
  return h + "</div></details>";
}

std::string candidatesSection(const std::vector<EvalResult>& results) {
  std::string h = R"h(<section id="candidates"><h2>Candidates</h2>)h";
  h +=
      R"h(<div class="filters" data-table="candidates-table"><input type="search" placeholder="filter candidates (problem, model, reason...)" aria-label="filter candidates"><select name="verdict" aria-label="verdict"><option value="">any verdict</option>)h";
  for (Verdict v : kAllVerdicts) h += fmt::format("<option>{}</option>", verdictName(v));
  h += R"h(</select><span class="count"></span></div>)h";
  h +=
      R"h(<div class="scroll"><table id="candidates-table" class="sortable"><thead><tr><th>problem</th><th>model</th><th class="num">sample</th><th>verdict</th><th class="hide-narrow">reason</th></tr></thead><tbody>)h";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const std::string reason = shortened(r.reason, 140);
    h += fmt::format(
        R"h(<tr data-verdict="{}"><td><a href="#{}">{}</a></td><td>{}</td><td class="num">{}</td><td class="v-{}">{}</td><td class="hide-narrow">{}</td></tr>)h",
        verdictName(r.verdict), anchorFor(i), esc(r.problem), esc(r.model), r.sample, verdictName(r.verdict), verdictName(r.verdict), esc(reason));
  }
  h += "</tbody></table></div><h3>Details</h3>";
  for (std::size_t i = 0; i < results.size(); ++i) h += candidateDetail(results[i], i);
  return h + "</section>";
}

std::string leaderboardSection(const nlohmann::json& summary) {
  if (summary["leaderboard"].size() < 2) return "";
  std::string h =
      R"h(<section id="leaderboard"><h2>Leaderboard</h2><div class="scroll"><table class="sortable"><thead><tr><th class="num">rank</th><th>model</th><th class="num">fast_1</th><th class="num">pass@1</th><th class="num">geomean speedup</th><th class="num">correct</th></tr></thead><tbody>)h";
  for (const auto& row : summary["leaderboard"]) {
    h += fmt::format(
        R"h(<tr><td class="num">{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>)h",
        row["rank"].get<int>(), esc(row["model"]), percentOr(row, "fast_1"), percentOr(row, "pass_at_1"),
        row.contains("geomean_speedup") ? fmt::format("{:.2f}x", row["geomean_speedup"].get<double>()) : "-", formatPercent(row["correct_rate"]));
  }
  return h + "</tbody></table></div><p>Ranked by fast_1, then pass@1.</p></section>";
}

}  // namespace

std::string renderHtml(const nlohmann::json& summary, const std::vector<EvalResult>& results, const std::string& assetsScript,
                       const std::string& assetsStyle) {
  std::string models;
  for (const auto& [model, m] : summary["models"].items()) models += (models.empty() ? "" : ", ") + model;
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  // No request may leave the file: forbid every fetch, allow only the inline script and styles.
  h +=
      R"h(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">)h";
  h += fmt::format("<title>CuSeT report · {}</title><style>{}{}</style></head><body><main>", esc(models), web::reportCss,
                   inlineSafe(assetsStyle, "style"));
  h += fmt::format(R"h(<header><h1>CuSeT evaluation report</h1><p class="run">{}</p><p class="run">models: {} · {} candidates</p></header>)h",
                   esc(describeRun(summary)), esc(models), summary["candidates"].get<int>());
  if (const std::string covered = coverageText(summary.value("coverage", nlohmann::json())); !covered.empty()) {
    h += R"h(<p class="run" id="coverage">)h" + esc(covered) + "</p>";
  }
  h += R"h(<nav><a href="#pass-at-k">pass@k</a><a href="#fast-p">fast_p</a><a href="#verdicts">verdicts</a>)h";
  if (summary.contains("comparison")) h += R"h(<a href="#comparison">comparison</a>)h";
  if (summary.value("kernelbench_agreement", nlohmann::json()).is_object()) h += R"h(<a href="#kernelbench">KernelBench</a>)h";
  h += R"h(<a href="#problems">problems</a><a href="#candidates">candidates</a></nav>)h";
  if (assetsScript.empty()) {
    h +=
        R"h(<p class="notice" id="assets-notice">Report assets were not available when this report was written (install Debian's <code>node-highlight.js</code>, e.g. with <code>scripts/install-deps.sh</code>, and rebuild): source code is shown without syntax highlighting. Everything else is complete.</p>)h";
  }
  if (!summary["warnings"].empty()) {
    h += R"h(<section id="warnings"><h2>Warnings</h2><ul>)h";
    for (const auto& w : summary["warnings"]) h += "<li>" + esc(w) + "</li>";
    h += "</ul></section>";
  }
  h += leaderboardSection(summary);
  h += comparisonSection(summary);
  h += passAtKSection(summary["models"]);
  h += timingSections(summary, results);
  h += verdictSection(summary["models"]);
  h += kernelBenchSection(summary);
  h += problemsSection(summary, results);
  h += candidatesSection(results);
  h += "</main>";
  if (!assetsScript.empty()) h += "<script>" + inlineSafe(assetsScript, "script") + "</script>";
  h += std::string("<script>(function () {") + sortableTablesScript() + web::reportJs + "})();</script></body></html>\n";
  return h;
}

}  // namespace cuset
