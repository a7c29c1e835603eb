// leaderboard.html: one self-contained file. Everything a reader needs without JavaScript is rendered
// here (tables, charts, the grid, the head-to-head matrix); the inline script only adds what needs a
// click: sorting and filtering the grid, a cell's candidates and a problem's statement, and the
// head-to-head view of any two models. Its data is the page's own copy of leaderboard.json's grid.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/reports/leaderboard_report.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/svg_chart.hpp"
#include "leaderboard_format.hpp"
#include "leaderboard_grid.hpp"
#include "web_assets.hpp"

using nlohmann::json;

namespace cuset {
namespace {

using namespace leaderboard;

std::string esc(const std::string& s) { return htmlEscape(s); }
std::string esc(const json& j) { return htmlEscape(j.is_string() ? j.get<std::string>() : j.dump()); }

// A hash argument: everything but unreserved characters percent-encoded, as encodeURIComponent does.
std::string uriComponent(const std::string& s) {
  std::string out;
  for (const unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += fmt::format("%{:02X}", ch);
    }
  }
  return out;
}

// JSON inside <script>: no '<' at all, so neither "</script>" nor "<!--" can end or bend it.
std::string scriptJson(const json& data) {
  const std::string text = dumpJson(data);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) out += ch == '<' ? std::string("\\u003c") : std::string(1, ch);
  return out;
}

std::string coversSection(const json& l) {
  std::string h = R"(<section id="covers"><h2>What these numbers cover</h2>)";
  for (const auto& sentence : coversText(l)) h += "<p class=\"covers\">" + esc(sentence) + "</p>";
  h += R"(<table id="settings"><tbody>)";
  for (const auto& [name, value] : settingsRows(l)) h += fmt::format("<tr><th>{}</th><td>{}</td></tr>", esc(name), esc(value));
  return h + "</tbody></table></section>";
}

std::string rankingSection(const json& l) {
  const int k = l["k"].get<int>();
  const bool timed = l["timing"] == "gpu";
  const bool compared = l.contains("compared_with");
  std::string h = fmt::format(
      R"(<section id="ranking"><div class="scroll"><table id="ranking-table" class="sortable"><thead><tr><th class="num">rank</th><th>model</th>)"
      R"(<th class="num">pass@1</th><th class="num">pass@{}</th><th class="num">correct</th><th class="num">solved</th>)",
      k);
  if (timed) h += R"(<th class="num">fast_1</th><th class="num">fast_1.5</th><th class="num">geomean speedup</th>)";
  h += R"(<th class="num">tokens (prompt + completion)</th><th class="num">cost</th><th class="num">per solved problem</th><th>verdicts</th>)";
  if (compared) h += "<th>vs base</th>";
  h += "<th>report</th></tr></thead><tbody>";
  for (const auto& row : l["models"]) {
    const bool ev = row["evaluated"].get<bool>();
    h += fmt::format(
        R"(<tr data-model="{}"><td class="num">{}</td><td title="{}">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>)",
        esc(row["model"]), ev ? std::to_string(row["rank"].get<int>()) : "–", esc(sourceText(row["source"])), esc(row["model"]),
        percentOr(row, "pass_at_1"), percentOr(row, "pass_at_k"), ev ? percentOr(row, "correct_rate") : esc(notEvaluated(row)),
        row.contains("solved") ? std::to_string(row["solved"].get<int>()) : "–");
    if (timed) {
      h += fmt::format(R"(<td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>)", fastOr(row, "1"), fastOr(row, "1.5"),
                       row.contains("geomean_speedup") ? fmt::format("{:.2f}x", row["geomean_speedup"].get<double>()) : "–");
    }
    h += fmt::format(R"(<td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td>)", esc(tokensText(row["generation"])),
                     moneyText(row, "cost"), esc(perSolvedText(row)), esc(sharesText(row)));
    if (compared) h += "<td>" + esc(comparisonText(row)) + "</td>";
    h += fmt::format("<td>{}</td></tr>", row.contains("report") ? fmt::format(R"(<a href="{0}">{0}</a>)", esc(row["report"])) : "–");
  }
  h += "</tbody></table></div>";
  for (const auto& row : l["models"]) {
    if (!row.contains("library_candidates")) continue;
    h += fmt::format("<p><b>{}</b>: {} candidate(s) run LibTorch ops beside their kernels; pass@1 of pure kernels {}{}.</p>", esc(row["model"]),
                     row["library_candidates"].get<int>(), percentOr(row, "pure_pass_at_1"),
                     row.contains("pure_fast_1") ? ", fast_1 " + percentOr(row, "pure_fast_1") : "");
  }
  return h + "</section>";
}

// A table and a chart of pass@1 per level, one bar per model.
std::string levelsSection(const json& l) {
  if (!l.contains("levels") || l["levels"].empty()) return "";
  const bool timed = l["timing"] == "gpu";
  std::string h = fmt::format(
      R"(<section id="per-level"><h2>Per level</h2><div class="charts"><div class="scroll"><table id="levels"><thead><tr><th>level</th><th>model</th><th class="num">problems</th>)"
      R"(<th class="num">pass@1</th><th class="num">pass@{}</th>{}</tr></thead><tbody>)",
      l["k"].get<int>(), timed ? R"(<th class="num">fast_1</th>)" : "");
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;
  for (const auto& model : evaluatedModels(l)) series.push_back({model, {}});
  for (const auto& level : l["levels"]) {
    categories.push_back(levelName(level));
    for (auto& s : series) s.values.push_back(NAN);
    for (const auto& row : level["models"]) {
      h += fmt::format(R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>{}</tr>)",
                       esc(levelName(level)), esc(row["model"]), row["problems"].get<int>(), percentOr(row, "pass_at_1"), percentOr(row, "pass_at_k"),
                       timed ? R"(<td class="num">)" + percentOr(row, "fast_1") + "</td>" : "");
      for (auto& s : series) {
        if (s.name == row["model"].get<std::string>()) s.values.back() = row.value("pass_at_1", 0.0);
      }
    }
  }
  h += "</tbody></table></div>";
  return h + R"(<figure id="levels-chart">)" + svgBarChart(categories, series, 1.0, "pass@1", true) +
         "<figcaption>pass@1 per level</figcaption></figure></div></section>";
}

// pass@k against what the samples cost (or their tokens when no price is set); with GPU timing, the
// fast_p curve and the distribution of the best speedup per solved problem.
std::string costSection(const json& l, const std::vector<std::string>& models) {
  const bool priced = std::any_of(l["models"].begin(), l["models"].end(), [](const json& r) { return r.contains("cost"); });
  std::vector<ChartPoint> points;
  for (const auto& row : l["models"]) {
    if (!row["evaluated"].get<bool>() || !row.contains("pass_at_k")) continue;
    const json& g = row["generation"];
    if (priced && row.contains("cost"))
      points.push_back({row["model"].get<std::string>(), row["cost"].get<double>(), row["pass_at_k"].get<double>()});
    if (!priced && g.contains("completion_tokens")) {
      points.push_back({row["model"].get<std::string>(),
                        static_cast<double>(g["prompt_tokens"].get<std::int64_t>() + g["completion_tokens"].get<std::int64_t>()),
                        row["pass_at_k"].get<double>()});
    }
  }
  const bool timed = l["timing"] == "gpu";
  if (points.empty() && !timed) return "";
  const std::string k = std::to_string(l["k"].get<int>());
  std::string h = R"(<section id="cost-speed"><h2>Cost and speed</h2><div class="charts">)";
  if (!points.empty()) {
    h += R"(<figure id="cost-chart">)" + svgScatter(points, 1.0, priced ? "cost of all samples" : "tokens (prompt + completion)", "pass@" + k, true) +
         fmt::format("<figcaption>pass@{} against {} per model{}.</figcaption></figure>", k,
                     priced ? "what its samples cost" : "the tokens its samples used",
                     points.size() < models.size() ? " (models without a price or token counts are left out)" : "");
  }
  if (timed) {
    const std::vector<double> ps(std::begin(kFastP), std::end(kFastP));
    std::vector<ChartSeries> fast, speed;
    for (const auto& row : l["models"]) {
      if (!row["evaluated"].get<bool>()) continue;
      ChartSeries s{row["model"].get<std::string>(), {}};
      for (double p : ps) s.values.push_back(row.contains("fast_p") ? row["fast_p"].value(fmt::format("{}", p), 0.0) : 0.0);
      fast.push_back(std::move(s));
      ChartSeries sp{row["model"].get<std::string>(), {}};
      for (const auto& p : l["problems"]) {
        if (p["cells"].contains(sp.name) && p["cells"][sp.name].contains("best_speedup"))
          sp.values.push_back(p["cells"][sp.name]["best_speedup"].get<double>());
      }
      speed.push_back(std::move(sp));
    }
    h += R"(<figure id="fastp-chart">)" + svgLineChart(ps, fast, 1.0, "speedup threshold p", "fast_p", true) +
         "<figcaption>fast_p: the share of candidates that are correct and more than p times as fast as the reference.</figcaption></figure>";
    h += R"(<figure id="speedup-chart">)" + svgLogHistogram(speed, "best speedup per solved problem", "problems") +
         "<figcaption>The best correct kernel's speedup per solved problem (log scale).</figcaption></figure>";
  }
  return h + "</div></section>";
}

std::string gridSection(const json& l, const std::vector<std::string>& models) {
  if (!l.contains("problems") || l["problems"].empty()) return "";
  std::set<int> levels;
  std::set<std::string> tags;
  for (const auto& p : l["problems"]) {
    levels.insert(p["level"].get<int>());
    for (const auto& t : p["tags"]) tags.insert(t.get<std::string>());
  }
  std::string h = R"(<section id="grid"><h2>Problems</h2><p>Each cell is one model on one problem: its correct candidates of those judged)";
  h += l["timing"] == "gpu" ? " and the best speedup" : "";
  h += R"(, or the best verdict when none is correct. Click a cell for the candidates, a problem for its statement.</p>)";
  h +=
      R"(<div class="filters" id="grid-filters"><input type="search" name="q" placeholder="filter problems" aria-label="filter problems"><select name="level" aria-label="level"><option value="">any level</option>)";
  for (int level : levels) h += fmt::format(R"(<option value="{}">level {}</option>)", level, level);
  h += R"(</select><select name="tag" aria-label="tag"><option value="">any tag</option>)";
  for (const auto& t : tags) h += fmt::format(R"(<option value="{0}">{0}</option>)", esc(t));
  h +=
      R"(</select><select name="solvers" aria-label="solved by"><option value="">solved or not</option><option value="one">solved by one model only</option>)"
      R"(<option value="none">solved by none</option><option value="some">solved by some, not all</option><option value="all">solved by all</option></select><span class="count"></span></div>)";
  h +=
      R"(<div class="panel" id="detail" hidden></div><noscript><p>Opening a cell needs JavaScript; each model's report lists its candidates.</p></noscript>)";
  h +=
      R"(<div class="scroll"><table id="grid-table" class="sortable"><thead><tr><th>problem</th><th class="num">level</th><th class="hide-narrow">tags</th><th class="num">solved by</th>)";
  for (const auto& m : models) h += "<th>" + esc(m) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& p : l["problems"]) {
    const std::string id = p["id"];
    std::string tagText, tagAttr = "|";
    for (const auto& t : p["tags"]) {
      tagText += (tagText.empty() ? "" : ", ") + t.get<std::string>();
      tagAttr += t.get<std::string>() + "|";
    }
    h += fmt::format(
        R"(<tr data-id="{}" data-level="{}" data-tags="{}" data-solvers="{}"><td><a class="problem" href="#problem={}">{}</a>{}</td><td class="num">{}</td><td class="hide-narrow">{}</td><td class="num">{}</td>)",
        esc(id), p["level"].get<int>(), esc(tagAttr), p["solved_by"].size(), uriComponent(id), esc(id),
        p.contains("excluded") ? R"( <span class="flag" title="flagged defective">(flagged)</span>)" : "", p["level"].get<int>(), esc(tagText),
        p["solved_by"].size());
    for (const auto& m : models) {
      if (!p["cells"].contains(m)) {
        h += R"(<td class="cell" data-sort="-1">–</td>)";
        continue;
      }
      const json& cell = p["cells"][m];
      const int c = cell["c"].get<int>(), n = std::max(1, cell["n"].get<int>());
      const std::string best = cell["best"];
      // Sorting descending puts the fastest solved cells first, then the surest, then the nearest misses.
      const double sortKey = c > 0 ? 1.0 + static_cast<double>(c) / n + cell.value("best_speedup", 0.0) : -cellVerdictRank(best) / 100.0;
      h += fmt::format(R"(<td class="cell v-{}" data-model="{}" data-sort="{:.4f}"><a href="#cell={}|{}">{}</a></td>)", esc(best), esc(m), sortKey,
                       uriComponent(id), uriComponent(m), esc(cellText(cell)));
    }
    h += "</tr>";
  }
  return h + "</tbody></table></div></section>";
}

std::string headToHeadSection(const json& l, const std::vector<std::string>& models) {
  if (models.size() < 2) return "";
  std::string h = R"(<section id="head-to-head"><h2>Head to head</h2><div class="filters"><label>model <select id="h2h-a">)";
  std::string options;
  for (const auto& m : models) options += fmt::format(R"(<option value="{0}">{0}</option>)", esc(m));
  h += options + R"(</select></label><label>against <select id="h2h-b">)" + options +
       R"(</select></label></div><div class="panel" id="h2h-view"></div>)";
  // The whole matrix, readable without the script.
  const bool timed = l["timing"] == "gpu";
  h += fmt::format(
      R"(<p>Problems the row's model solves and the column's does not{}.</p><div class="scroll"><table id="h2h-matrix"><thead><tr><th></th>)",
      timed ? "; in brackets, the geometric mean of the row's best speedup over the column's where both solve it" : "");
  for (const auto& m : models) h += "<th>" + esc(m) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& a : models) {
    h += "<tr><th>" + esc(a) + "</th>";
    for (const auto& b : models) h += fmt::format(R"(<td class="num" data-a="{}" data-b="{}">{}</td>)", esc(a), esc(b), headToHeadText(l, a, b));
    h += "</tr>";
  }
  return h + "</tbody></table></div></section>";
}

std::string modelsSection(const json& l) {
  std::string h = R"(<section id="models"><h2>Models</h2><div class="scroll"><table id="model-settings"><thead><tr><th>model</th>)";
  for (const char* column : kModelSettingColumns) h += "<th>" + esc(std::string(column)) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& row : l["models"]) {
    h += "<tr><td>" + esc(row["model"]) + "</td>";
    for (const auto& v : modelSettings(row["source"])) h += "<td>" + esc(v) + "</td>";
    h += "</tr>";
  }
  return h + "</tbody></table></div></section>";
}

// Problem id -> the source keys of its cells' candidates, in the order they are packed: opening a cell
// inflates its problem's sources only, and every model's kernels for one problem share the
// compressor's window.
json sourceChunks(const json& l) {
  json chunks = json::object();
  const json problems = l.value("problems", json::array());
  for (const auto& p : problems) {
    std::vector<std::string> keys;
    std::set<std::string> seen;
    for (const auto& [model, cell] : p["cells"].items()) {
      for (const auto& index : cell["candidates"]) {
        const std::string key = l["candidates"][index.get<std::size_t>()]["source"];
        if (seen.insert(key).second) keys.push_back(key);
      }
    }
    chunks[p["id"].get<std::string>()] = keys;
  }
  return chunks;
}

json pageData(const json& l, const std::vector<std::string>& models, const json& chunks) {
  json reports = json::object();
  for (const auto& row : l["models"]) {
    if (row.contains("report")) reports[row["model"].get<std::string>()] = row["report"];
  }
  json data = {{"models", models}, {"timed", l["timing"] == "gpu"}, {"reports", reports}};
  for (const char* field : {"problems", "statements", "candidates", "head_to_head"}) data[field] = l.value(field, json::array());
  if (data["statements"].is_array()) data["statements"] = json::object();
  data["source_chunks"] = chunks;
  return data;
}

// gzip (RFC 1952), which the browser's DecompressionStream inflates natively.
std::string gzip(std::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw makeError("zlib: deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw makeError("zlib: deflate did not finish ({})", rc);
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t b0 = static_cast<unsigned char>(bytes[i]);
    const std::uint32_t b1 = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const std::uint32_t b2 = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// The sources block: per problem, a JSON array in sourceChunks' order, gzip'd, in base64.
std::string sourcesBlock(const json& l, const json& chunks) {
  json packed = json::object();
  for (const auto& [problem, keys] : chunks.items()) {
    json list = json::array();
    for (const auto& key : keys) list.push_back(l["sources"].value(key.get<std::string>(), ""));
    packed[problem] = base64(gzip(dumpJson(list)));
  }
  return scriptJson(packed);
}

}  // namespace

std::string renderLeaderboardHtml(const json& l) {
  const int k = l["k"].get<int>();
  const bool timed = l["timing"] == "gpu";
  const std::string name = l["leaderboard"].get<std::string>();
  const std::vector<std::string> models = evaluatedModels(l);
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  // Nothing may leave the file: no fetch of any kind, only the inline script and styles.
  h +=
      R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">)";
  h += fmt::format("<title>CuSeT leaderboard · {}</title><style>{}{}</style></head><body><main>", esc(name), simplePageStyle(), web::leaderboardCss);
  h += fmt::format("<h1>CuSeT leaderboard: {}</h1><p>k = {} samples per problem · {}{}</p>", esc(name), k,
                   timed ? "timed on a GPU" : "no GPU timing (fast_p needs the cuda backend)",
                   l.contains("compared_with") ? " · compared with " + esc(l["compared_with"]) : "");
  if (l["regression"].get<bool>()) h += "<p><strong>Regression</strong>: at least one model is worse than in the base leaderboard.</p>";
  h += rankingSection(l);
  h += coversSection(l);
  h += levelsSection(l);
  h += costSection(l, models);
  h += gridSection(l, models);
  h += headToHeadSection(l, models);
  h += modelsSection(l);
  h += "</main>";
  if (l.contains("problems") && !l["problems"].empty()) {
    const json chunks = sourceChunks(l);
    h += R"(<script type="application/json" id="leaderboard-data">)" + scriptJson(pageData(l, models, chunks)) + "</script>";
    h += R"(<script type="application/json" id="leaderboard-sources">)" + sourcesBlock(l, chunks) + "</script>";
    h += std::string("<script>(function () {") + sortableTablesScript() + web::leaderboardJs + "})();</script>";
  }
  return h + "</body></html>\n";
}

}  // namespace cuset
