#include "cuset/reports/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cuset/reports/renderers.hpp"

namespace cuset {
namespace {

// Colour-blind-safe palette (Okabe-Ito).
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"};
constexpr int kWidth = 640, kHeight = 300, kLeft = 68, kRight = 16, kTop = 16, kBottom = 56;

const char* colour(std::size_t i) { return kColours[i % std::size(kColours)]; }

std::string valueText(double v, bool percent) { return percent ? fmt::format("{:.1f}%", 100 * v) : fmt::format("{:.3g}", v); }

std::string open(const std::string& label) {
  return fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">)", kWidth, kHeight,
                     htmlEscape(label));
}

// Y axis with 5 gridlines from 0 to yMax.
std::string yAxis(double yMax, const std::string& yLabel, bool percent) {
  std::string s;
  const int plotH = kHeight - kTop - kBottom;
  for (int i = 0; i <= 4; ++i) {
    const double v = yMax * i / 4.0;
    const double y = kTop + plotH - plotH * i / 4.0;
    s +=
        fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="grid"/><text x="{}" y="{:.1f}" class="tick" text-anchor="end">{}</text>)",
                    kLeft, kWidth - kRight, y, y, kLeft - 6, y + 4, valueText(v, percent));
  }
  s += fmt::format(R"(<text class="axis-label" transform='translate(12 {}) rotate(-90)' text-anchor="middle">{}</text>)", kTop + plotH / 2,
                   htmlEscape(yLabel));
  return s;
}

std::string legend(const std::vector<ChartSeries>& series) {
  if (series.size() < 2) return "";
  std::string s;
  double x = kLeft;
  for (std::size_t i = 0; i < series.size(); ++i) {
    s += fmt::format(R"(<rect x="{:.0f}" y="{}" width="10" height="10" fill="{}"/><text x="{:.0f}" y="{}" class="tick">{}</text>)", x, kHeight - 14,
                     colour(i), x + 14, kHeight - 5, htmlEscape(series[i].name));
    x += 24 + 7.0 * static_cast<double>(series[i].name.size());
  }
  return s;
}

}  // namespace

std::string svgBarChart(const std::vector<std::string>& categories, const std::vector<ChartSeries>& series, double yMax, const std::string& yLabel,
                        bool percent) {
  std::string s = open(yLabel) + yAxis(yMax, yLabel, percent);
  const int plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  const double groupW = categories.empty() ? 0 : static_cast<double>(plotW) / static_cast<double>(categories.size());
  const double barW = series.empty() ? 0 : std::min(40.0, groupW * 0.8 / static_cast<double>(series.size()));
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double groupX = kLeft + groupW * static_cast<double>(c) + (groupW - barW * static_cast<double>(series.size())) / 2;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const double v = c < series[i].values.size() ? series[i].values[c] : 0.0;
      if (std::isnan(v)) continue;  // no value (e.g. pass@10 with fewer than 10 samples)
      const double h = yMax > 0 ? plotH * std::clamp(v / yMax, 0.0, 1.0) : 0.0;
      s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{} · {}: {}</title></rect>)",
                       groupX + barW * static_cast<double>(i), kTop + plotH - h, barW - 2, h, colour(i), htmlEscape(categories[c]),
                       htmlEscape(series[i].name), valueText(v, percent));
    }
    s += fmt::format(R"(<text x="{:.1f}" y="{}" class="tick" text-anchor="middle">{}</text>)", kLeft + groupW * (static_cast<double>(c) + 0.5),
                     kTop + plotH + 16, htmlEscape(categories[c]));
  }
  return s + legend(series) + "</svg>";
}

std::string svgLineChart(const std::vector<double>& xs, const std::vector<ChartSeries>& series, double yMax, const std::string& xLabel,
                         const std::string& yLabel, bool percent) {
  std::string s = open(yLabel) + yAxis(yMax, yLabel, percent);
  const int plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  const double xMax = xs.empty() ? 1.0 : *std::max_element(xs.begin(), xs.end());
  auto px = [&](double x) { return kLeft + plotW * (xMax > 0 ? x / xMax : 0.0); };
  auto py = [&](double y) { return kTop + plotH - plotH * (yMax > 0 ? std::clamp(y / yMax, 0.0, 1.0) : 0.0); };
  for (double x : xs) {
    s += fmt::format(R"(<text x="{:.1f}" y="{}" class="tick" text-anchor="middle">{:g}</text>)", px(x), kTop + plotH + 16, x);
  }
  s += fmt::format(R"(<text x="{}" y="{}" class="axis-label" text-anchor="middle">{}</text>)", kLeft + plotW / 2, kTop + plotH + 32,
                   htmlEscape(xLabel));
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::string points;
    for (std::size_t j = 0; j < xs.size() && j < series[i].values.size(); ++j)
      points += fmt::format("{:.1f},{:.1f} ", px(xs[j]), py(series[i].values[j]));
    s += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)", points, colour(i));
    for (std::size_t j = 0; j < xs.size() && j < series[i].values.size(); ++j) {
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"><title>{} · p = {:g}: {}</title></circle>)", px(xs[j]),
                       py(series[i].values[j]), colour(i), htmlEscape(series[i].name), xs[j], valueText(series[i].values[j], percent));
    }
  }
  return s + legend(series) + "</svg>";
}

std::string svgLogHistogram(const std::vector<ChartSeries>& series, const std::string& xLabel, const std::string& yLabel) {
  // Bins of width 1/2 in log2 space between the extremes (at least [1/4, 4]).
  double lo = -2.0, hi = 2.0;
  for (const auto& s : series) {
    for (double v : s.values) {
      if (v > 0) {
        lo = std::min(lo, std::floor(2 * std::log2(v)) / 2);
        hi = std::max(hi, std::ceil(2 * std::log2(v)) / 2);
      }
    }
  }
  const int bins = std::max(1, static_cast<int>(std::lround((hi - lo) * 2)));
  std::vector<std::vector<int>> counts(series.size(), std::vector<int>(static_cast<std::size_t>(bins), 0));
  int maxCount = 1;
  for (std::size_t i = 0; i < series.size(); ++i) {
    for (double v : series[i].values) {
      if (!(v > 0)) continue;
      const int b = std::clamp(static_cast<int>(std::floor((std::log2(v) - lo) * 2)), 0, bins - 1);
      maxCount = std::max(maxCount, ++counts[i][static_cast<std::size_t>(b)]);
    }
  }
  std::vector<std::string> categories;
  std::vector<ChartSeries> bars;
  for (int b = 0; b < bins; ++b) categories.push_back(fmt::format("{:.2g}x", std::exp2(lo + b / 2.0)));
  for (std::size_t i = 0; i < series.size(); ++i) {
    ChartSeries c{series[i].name, {}};
    for (int n : counts[i]) c.values.push_back(n);
    bars.push_back(std::move(c));
  }
  std::string svg = svgBarChart(categories, bars, maxCount, yLabel, false);
  // Mark speedup 1x, where a candidate starts beating the reference.
  return svg.substr(0, svg.size() - 6) +
         fmt::format(
             R"(<text x="{}" y="{}" class="axis-label" text-anchor="middle">{} (bin lower edges; 1x = as fast as the reference)</text></svg>)",
             kLeft + (kWidth - kLeft - kRight) / 2, kHeight - 24, htmlEscape(xLabel));
}

std::string svgScatter(const std::vector<ChartPoint>& points, double yMax, const std::string& xLabel, const std::string& yLabel, bool percentY) {
  std::string s = open(yLabel) + yAxis(yMax, yLabel, percentY);
  const int plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  double xMax = 0;
  for (const auto& p : points) xMax = std::max(xMax, p.x);
  xMax = xMax > 0 ? xMax * 1.15 : 1.0;  // room for the last point's label
  auto px = [&](double x) { return kLeft + plotW * std::clamp(x / xMax, 0.0, 1.0); };
  auto py = [&](double y) { return kTop + plotH - plotH * (yMax > 0 ? std::clamp(y / yMax, 0.0, 1.0) : 0.0); };
  for (int i = 0; i <= 4; ++i) {
    const double x = xMax * i / 4.0;
    s +=
        fmt::format(R"(<text x="{:.1f}" y="{}" class="tick" text-anchor="{}">{:.3g}</text>)", px(x), kTop + plotH + 16, i == 4 ? "end" : "middle", x);
  }
  s += fmt::format(R"(<text x="{}" y="{}" class="axis-label" text-anchor="middle">{}</text>)", kLeft + plotW / 2, kTop + plotH + 32,
                   htmlEscape(xLabel));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="5" fill="{}"><title>{}: {} at {:.4g}</title></circle>)"
                     R"(<text x="{:.1f}" y="{:.1f}" class="tick">{}</text>)",
                     px(p.x), py(p.y), colour(i), htmlEscape(p.name), valueText(p.y, percentY), p.x, px(p.x) + 8, py(p.y) - 6, htmlEscape(p.name));
  }
  return s + "</svg>";
}

}  // namespace cuset
