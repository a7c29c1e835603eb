#include "cuset/reports/analysis_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuset/reports/renderers.hpp"
#include "cuset/reports/svg_chart.hpp"
#include "web_assets.hpp"

namespace cuset {
namespace {

// Red (confidence 0) through yellow to green (1).
std::string colour(double p) { return fmt::format("hsl({:.0f}, 75%, 82%)", 120.0 * std::clamp(p, 0.0, 1.0)); }

std::vector<double> shares(const nlohmann::json& h) {
  std::vector<double> out;
  const double total = std::max(1.0, h.value("tokens", 0.0));
  for (const auto& n : h["counts"]) out.push_back(n.get<double>() / total);
  return out;
}

}  // namespace

std::string renderAnalysisHtml(const nlohmann::json& a) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)";
  h += fmt::format("<title>CuSeT analysis</title><style>{}{}</style></head><body><main>", simplePageStyle(), web::analysisCss);
  h += fmt::format("<h1>CuSeT analysis</h1><p>model {} · data {} · {} samples · high confidence means p &ge; {}</p>",
                   htmlEscape(a.value("model", "")), htmlEscape(a.value("data", "")), a.value("samples", 0), a.value("high_confidence", 0.9));

  const auto& s = a["sensitive"];
  const auto& o = a["other"];
  h +=
      R"(<h2>Sensitive vs other response tokens</h2><div class="charts"><div class="scroll"><table><thead><tr><th></th><th class="num">tokens</th><th class="num">mean confidence</th><th class="num">high-confidence share</th></tr></thead><tbody>)";
  for (const auto& [label, g] : {std::pair{"CUDA-sensitive", &s}, std::pair{"other", &o}}) {
    h += fmt::format(R"(<tr><td>{}</td><td class="num">{}</td><td class="num">{:.3f}</td><td class="num">{}</td></tr>)", label,
                     (*g)["tokens"].get<long>(), (*g)["mean"].get<double>(), formatPercent((*g)["high_confidence_share"].get<double>()));
  }
  h += "</tbody></table></div>";
  const int bins = a.value("bins", 20);
  std::vector<std::string> labels;
  for (int b = 0; b < bins; ++b) labels.push_back(b % 5 == 0 ? fmt::format("{:.2f}", static_cast<double>(b) / bins) : "");
  std::vector<ChartSeries> series = {{"sensitive", shares(s)}, {"other", shares(o)}};
  double yMax = 0.0;
  for (const auto& sr : series) yMax = std::max(yMax, *std::max_element(sr.values.begin(), sr.values.end()));
  h += "<figure>" + svgBarChart(labels, series, std::max(0.05, yMax), "share of tokens", true) +
       "<figcaption>Confidence p(y_t) of response tokens, binned (bin lower edges shown every 5 bins).</figcaption></figure></div>";

  h +=
      R"(<h2>Per category</h2><div class="scroll"><table><thead><tr><th>category</th><th class="num">tokens</th><th class="num">mean confidence</th><th class="num">high-confidence share</th><th class="num">low-confidence regions touching it</th></tr></thead><tbody>)";
  for (const auto& [name, g] : a["categories"].items()) {
    h += fmt::format(R"(<tr><td>{}</td><td class="num">{}</td><td class="num">{:.3f}</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                     htmlEscape(name), g["tokens"].get<long>(), g["mean"].get<double>(), formatPercent(g["high_confidence_share"].get<double>()),
                     a["regions"]["categories"].value(name, 0));
  }
  const auto& r = a["regions"];
  h += "</tbody></table></div>";
  h += fmt::format(
      "<h2>Low-confidence regions</h2><p>{} regions in {} of {} samples; mean length {:.1f} tokens, median {} (sensitive tokens with p &lt; {}, "
      "merged across gaps of &le; {} tokens, at least {} such tokens).</p>",
      r["count"].get<long>(), r["samples_with_regions"].get<long>(), a.value("samples", 0), r["mean_length"].get<double>(),
      r["median_length"].get<long>(), r["threshold"].get<double>(), r["gap"].get<long>(), r["min_tokens"].get<long>());

  h +=
      R"(<h2>Heat map</h2><p class="legend">confidence: <span style="background: )" + colour(0.0) + R"(">0</span><span style="background: )" +
      colour(0.5) + R"(">0.5</span><span style="background: )" + colour(1.0) +
      R"(">1</span> · <b><u>bold underlined</u></b>: CUDA-sensitive · outlined: inside a low-confidence region · hover a token for its confidence and categories</p>)";
  for (const auto& sample : a["heatmap"]) {
    const std::string text = sample["text"];
    std::string pre;
    std::size_t at = 0;
    for (const auto& t : sample["tokens"]) {
      const std::size_t b = t["start"], e = t["end"];
      if (b < at || e > text.size()) continue;
      pre += htmlEscape(text.substr(at, b - at));
      std::string cats;
      for (const auto& c : t["categories"]) cats += (cats.empty() ? "" : ", ") + c.get<std::string>();
      std::string cls = cats.empty() ? "" : "s";
      if (t["region"].get<int>() >= 0) cls += cls.empty() ? "r" : " r";
      pre += fmt::format(R"(<span{} style="background: {}" title="p = {:.3f}{}">{}</span>)", cls.empty() ? "" : " class=\"" + cls + "\"",
                         colour(t["confidence"].get<double>()), t["confidence"].get<double>(), cats.empty() ? "" : " · " + cats,
                         htmlEscape(text.substr(b, e - b)));
      at = e;
    }
    pre += htmlEscape(text.substr(std::min(at, text.size())));
    h += "<pre class=\"heat\">" + pre + "</pre>";
  }
  return h + "</main></body></html>\n";
}

}  // namespace cuset
