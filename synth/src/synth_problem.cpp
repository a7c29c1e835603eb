#include "cuset/synth/synth_problem.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace cuset::synth {

std::string_view dtypeName(Dtype d) {
  switch (d) {
    case Dtype::f16:
      return "float16";
    case Dtype::bf16:
      return "bfloat16";
    default:
      return "float32";
  }
}

std::string_view dtypeShort(Dtype d) {
  switch (d) {
    case Dtype::f16:
      return "f16";
    case Dtype::bf16:
      return "bf16";
    default:
      return "f32";
  }
}

std::string_view dtypeCType(Dtype d) {
  switch (d) {
    case Dtype::f16:
      return "__half";
    case Dtype::bf16:
      return "__nv_bfloat16";
    default:
      return "float";
  }
}

std::string loadAsFloat(Dtype d, const std::string& expr) {
  switch (d) {
    case Dtype::f16:
      return "__half2float(" + expr + ")";
    case Dtype::bf16:
      return "__bfloat162float(" + expr + ")";
    default:
      return expr;
  }
}

std::string storeFromFloat(Dtype d, const std::string& floatExpr) {
  switch (d) {
    case Dtype::f16:
      return "__float2half_rn(" + floatExpr + ")";
    case Dtype::bf16:
      return "__float2bfloat16_rn(" + floatExpr + ")";
    default:
      return floatExpr;
  }
}

std::string torchFloat(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string cudaFloat(double v) { return torchFloat(v) + "f"; }

namespace {

std::string sizeMap(const SizeList& sizes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : sizes) parts.push_back(fmt::format("{}: {}", name, value));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

std::string tensorLine(const SynthTensor& t) {
  std::string line = fmt::format("  {}: {{dtype: {}, shape: [{}]", t.name, dtypeName(t.dtype), fmt::join(t.shape, ", "));
  if (!t.init.empty()) line += ", init: " + t.init;
  return line + "}\n";
}

}  // namespace

std::string SynthProblem::yaml() const {
  std::string y = fmt::format("name: {}\nlevel: 1\ntags: [{}]\ndescription: \"{}\"\nsizes:\n  small: {}\n  full: {}\ninputs:\n", name,
                              fmt::join(tags, ", "), description, sizeMap(small), sizeMap(full));
  for (const auto& t : inputs) y += tensorLine(t);
  y += "outputs:\n";
  for (const auto& t : outputs) y += tensorLine(t);
  y += "reference: |\n";
  std::size_t start = 0;
  while (start < reference.size()) {
    const std::size_t end = reference.find('\n', start);
    y += "  " + reference.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (!toleranceWhy.empty()) y += "# " + toleranceWhy + "\n";
  y += fmt::format("tolerance: {{atol: {}, rtol: {}}}\n", torchFloat(atol), torchFloat(rtol));
  if (!flops.empty()) y += fmt::format("cost: {{flops: {}, bytes: {}}}\n", flops, bytes);
  return y;
}

std::string renderResponse(const std::vector<SynthLaunch>& launches, const std::string& kernelSource) {
  std::string text = "```cuda\n/*@cuset\nlaunches:\n";
  for (const auto& l : launches) {
    text += fmt::format("  - kernel: {}\n    grid: [{}]\n    block: [{}]\n", l.kernel, fmt::join(l.grid, ", "), fmt::join(l.block, ", "));
    if (!l.sharedBytes.empty()) text += fmt::format("    shared_bytes: {}\n", l.sharedBytes);
    text += fmt::format("    args: [{}]\n", fmt::join(l.args, ", "));
  }
  return text + "*/\n" + kernelSource + "```";
}

}  // namespace cuset::synth
