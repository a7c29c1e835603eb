#pragma once
// Small server-side SVG charts for report.html: they render without JavaScript and stay inside the
// self-contained file. Values carry <title> tooltips.
#include <string>
#include <utility>
#include <vector>

namespace cuset {

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // one per category (bar chart) or per x (line chart)
};

// Grouped vertical bars: one group per category, one bar per series; y in [0, yMax].
std::string svgBarChart(const std::vector<std::string>& categories, const std::vector<ChartSeries>& series, double yMax, const std::string& yLabel,
                        bool percent);

// Lines over shared x values (e.g. fast_p over p).
std::string svgLineChart(const std::vector<double>& xs, const std::vector<ChartSeries>& series, double yMax, const std::string& xLabel,
                         const std::string& yLabel, bool percent);

// Histogram of positive values on a log2 axis (e.g. speedups), one colour per series; `yLabel` says
// what is counted.
std::string svgLogHistogram(const std::vector<ChartSeries>& series, const std::string& xLabel, const std::string& yLabel = "candidates");

struct ChartPoint {
  std::string name;
  double x = 0, y = 0;
};

// Labelled points (e.g. one per model: pass@k against cost); x from 0 to just past the largest value.
std::string svgScatter(const std::vector<ChartPoint>& points, double yMax, const std::string& xLabel, const std::string& yLabel, bool percentY);

}  // namespace cuset
