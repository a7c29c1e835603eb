#include "cuset/evaluator/suite/suite_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/common/text_table.hpp"

namespace cuset {

std::string formatProblemList(const ProblemSuite& suite) {
  TextTable table({"id", "level", "inputs", "outputs", "tags"});
  for (const auto& p : suite.problems()) {
    std::vector<std::string> ins, outs;
    for (const auto& t : p.inputs) ins.push_back(fmt::format("{}:{}", t.name, dtypeName(t.dtype)));
    for (const auto& t : p.outputs) outs.push_back(fmt::format("{}:{}", t.name, dtypeName(t.dtype)));
    table.addRow({p.id, std::to_string(p.level), fmt::format("{}", fmt::join(ins, " ")), fmt::format("{}", fmt::join(outs, " ")),
                  fmt::format("{}", fmt::join(p.tags, ","))});
  }
  std::string out = table.render();
  out += fmt::format("{} problem(s)\n", suite.problems().size());
  for (const auto& e : suite.loadErrors()) out += fmt::format("load error: {}\n", e);
  return out;
}

std::string formatProblemDetails(const Problem& p) {
  std::string out = fmt::format("{}  (level {})\n", p.id, p.level);
  if (!p.description.empty()) out += fmt::format("  {}\n", p.description);
  if (!p.tags.empty()) out += fmt::format("  tags: {}\n", fmt::join(p.tags, ", "));
  out += "  sizes:\n";
  for (const auto& s : p.sizeSets) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : s.sizes) kv.push_back(fmt::format("{}={}", k, v));
    out += fmt::format("    {:<8} {}\n", s.name, fmt::join(kv, " "));
  }
  auto shapeText = [](const TensorSpec& t) {
    std::vector<std::string> dims;
    for (const auto& d : t.shape) dims.push_back(d.text());
    return fmt::format("[{}]", fmt::join(dims, ", "));
  };
  out += "  inputs:\n";
  for (const auto& t : p.inputs) {
    const bool produced = p.inputTransform && p.inputTransform->producesInput(t.name);
    out += fmt::format("    {:<8} {:<9} {:<16} {}\n", t.name, dtypeName(t.dtype), shapeText(t),
                       produced ? "from the input transform" : t.init.describe());
  }
  out += "  outputs:\n";
  for (const auto& t : p.outputs) out += fmt::format("    {:<8} {:<9} {}\n", t.name, dtypeName(t.dtype), shapeText(t));
  out += fmt::format("  tolerance: atol={} rtol={}{}\n", p.tolerance.atol, p.tolerance.rtol, p.toleranceGiven ? "" : " (dtype default)");
  for (const auto& [set, c] : p.costPerSet) {
    out += fmt::format("  cost[{}]: flops={} bytes={}\n", set, c.flops ? std::to_string(*c.flops) : "-", c.bytes ? std::to_string(*c.bytes) : "-");
  }
  if (p.origin) {
    out += fmt::format("  origin: {} {} (commit {}, level {} problem {})\n", p.origin->suite, p.origin->file, p.origin->commit, p.origin->level,
                       p.origin->number);
  }
  if (p.referenceArchive) {
    for (const auto& [set, file] : p.referenceArchive->archives) out += fmt::format("  reference archive[{}]: {}\n", set, file.string());
    if (!p.referenceArchive->attributes.empty()) out += fmt::format("  set as attributes: {}\n", fmt::join(p.referenceArchive->attributes, " "));
  }
  if (p.inputTransform) {
    out += fmt::format("  input transform: {} from {} draw(s)\n", fmt::join(p.inputTransform->produces, " "), p.inputTransform->draws.size());
  }
  if (p.costFlops) out += fmt::format("  cost.flops: {}\n", p.costFlops->text());
  if (p.costBytes) out += fmt::format("  cost.bytes: {}\n", p.costBytes->text());
  if (!p.reference.empty()) out += fmt::format("  reference{}:\n", p.referenceInFloat64 ? " (float64)" : "");
  std::size_t start = 0;
  while (start < p.reference.size()) {
    std::size_t end = p.reference.find('\n', start);
    if (end == std::string::npos) end = p.reference.size();
    out += fmt::format("    {}\n", p.reference.substr(start, end - start));
    start = end + 1;
  }
  out += fmt::format("  folder: {}\n", p.directory.string());
  return out;
}

std::string formatProblemCheck(const std::vector<ProblemCheckResult>& results, const std::vector<std::string>& loadErrors) {
  TextTable table({"problem", "status", "reference ms", "detail"});
  std::size_t failed = 0, flagged = 0;
  for (const auto& r : results) {
    if (!r.ok()) ++failed;
    // A flagged problem's defects are shown as what they are: known, not a failure of the suite.
    const bool known = r.ok() && r.defectFlagged;
    if (known) ++flagged;
    std::vector<std::string> details = known ? r.defects : r.problems();
    if (known && details.empty()) details.push_back("flagged defective in its problem.yaml (stochastic: the check cannot see it)");
    table.addRow({r.id, !r.ok() ? "FAIL" : known ? "flagged" : "ok", fmt::format("{:.2f}", r.referenceMs), details.empty() ? "" : details.front()});
    for (std::size_t i = 1; i < details.size(); ++i) table.addRow({"", "", "", details[i]});
  }
  std::string out = table.render();
  for (const auto& e : loadErrors) out += fmt::format("LOAD ERROR {}\n", e);
  out += fmt::format("{} problem(s) checked: {} ok ({} flagged as defective by their problem.yaml), {} failed, {} failed to load\n", results.size(),
                     results.size() - failed, flagged, failed, loadErrors.size());
  return out;
}

}  // namespace cuset
