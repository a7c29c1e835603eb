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
std::string svgBarChart(const std::vector<std::string>& categories, const std::vector<ChartSeries>& series, double yMax,
                        const std::string& yLabel, bool percent);

// Lines over shared x values (e.g. fast_p over p).
std::string svgLineChart(const std::vector<double>& xs, const std::vector<ChartSeries>& series, double yMax, const std::string& xLabel,
                         const std::string& yLabel, bool percent);

// Histogram of positive values on a log2 axis (e.g. speedups), one colour per series.
std::string svgLogHistogram(const std::vector<ChartSeries>& series, const std::string& xLabel);

}  // namespace cuset
