#include "cuset/evaluator/suite/suite_table.hpp"

#include "cuset/evaluator/timing/speed_of_light.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

namespace cuset {
namespace {

std::string sizesText(const Problem& p, std::string_view set) {
  const SizeSet* s = p.findSizeSet(set);
  if (!s) return "-";
  std::vector<std::string> kv;
  for (const auto& [k, v] : s->sizes) kv.push_back(fmt::format("{}={}", k, v));
  return fmt::format("{}", fmt::join(kv, " "));
}

std::string scaled(std::optional<std::int64_t> value, double unit) {
  if (!value) return "-";
  const double v = static_cast<double>(*value) / unit;
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

std::optional<double> h100RooflineMs(const Problem& problem, std::string_view sizeSet) { return rooflineMs(problem, sizeSet, h100Peaks()); }

std::string formatSuiteMarkdown(const ProblemSuite& suite) {
  std::string out =
      "| problem | level | tags | dtypes | small | full | GFLOP (full) | MB moved (full) | H100 roofline ms (full) |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& p : suite.problems()) {
    std::set<std::string> dtypes;
    for (const auto& t : p.inputs) dtypes.insert(std::string(dtypeName(t.dtype)));
    for (const auto& t : p.outputs) dtypes.insert(std::string(dtypeName(t.dtype)));
    const auto roofline = h100RooflineMs(p, "full");
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n", p.id, p.level, fmt::join(p.tags, ", "), fmt::join(dtypes, ", "),
                       sizesText(p, "small"), sizesText(p, "full"), scaled(p.flopsAt("full"), 1e9), scaled(p.bytesAt("full"), 1e6),
                       roofline ? fmt::format("{:.2f}", *roofline) : "-");
  }
  std::map<int, std::size_t> perLevel;
  for (const auto& p : suite.problems()) ++perLevel[p.level];
  std::vector<std::string> counts;
  for (const auto& [level, n] : perLevel) counts.push_back(fmt::format("level {}: {}", level, n));
  out += fmt::format("\n{} problems ({}).\n", suite.problems().size(), fmt::join(counts, ", "));
  return out;
}

Expected<std::string> replaceGeneratedTable(std::string_view document, std::string_view table) {
  const std::size_t begin = document.find(kTableBegin);
  const std::size_t end = document.find(kTableEnd);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) {
    return Unexpected(fmt::format("the markers '{}' and '{}' must both be present, in this order", kTableBegin, kTableEnd));
  }
  std::string out(document.substr(0, begin + kTableBegin.size()));
  out += "\n\n";
  out += table;
  out += "\n";
  out += document.substr(end);
  return out;
}

}  // namespace cuset
