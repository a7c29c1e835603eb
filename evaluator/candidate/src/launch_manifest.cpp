#include "cuset/evaluator/candidate/launch_manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <regex>

#include "cuset/common/error.hpp"
#include "cuset/common/yaml_util.hpp"

namespace cuset {
namespace {

constexpr std::string_view kOpen = "/*@cuset";

class ManifestParser {
 public:
  ManifestParser(const Problem& problem, int lineOffset) : problem_(problem), yaml_("manifest", lineOffset) {}

  const YamlReader& yaml() const { return yaml_; }

  LaunchManifest parse(std::string_view text, int firstLine) {
    const YAML::Node root = yaml_.parse(text);
    if (!root.IsMap()) yaml_.fail(root, "", "the manifest must be a mapping with a 'launches' list");
    yaml_.onlyKeys(root, "", {"launches", "workspace"});
    LaunchManifest m;
    m.firstLine = firstLine;
    if (const YAML::Node ws = root["workspace"]) parseWorkspace(ws, m);
    const YAML::Node launches = yaml_.require(root, "launches", "");
    yaml_.expectSequence(launches, "launches");
    if (launches.size() == 0) yaml_.fail(launches, "launches", "needs at least one launch");
    if (launches.size() > LaunchLimits::maxManifestLaunches)
      yaml_.fail(launches, "launches", fmt::format("more than {} launches", LaunchLimits::maxManifestLaunches));
    for (std::size_t i = 0; i < launches.size(); ++i) m.launches.push_back(parseLaunch(launches[i], indexPath("launches", i), m));
    for (const auto& out : problem_.outputs) {
      const bool passed = std::any_of(m.launches.begin(), m.launches.end(), [&](const KernelLaunch& l) {
        return std::any_of(l.args.begin(), l.args.end(),
                           [&](const LaunchArg& a) { return a.kind == LaunchArg::Kind::buffer && a.buffer == out.name; });
      });
      if (!passed) yaml_.fail(launches, "launches", fmt::format("output '{}' is never passed to a kernel, so nothing can write it", out.name));
    }
    return m;
  }

 private:
  bool isBuffer(const LaunchManifest& m, std::string_view name) const {
    if (problem_.findTensor(name)) return true;
    return std::any_of(m.workspace.begin(), m.workspace.end(), [&](auto& w) { return w.name == name; });
  }

  IntExpr expression(const YAML::Node& node, const std::string& path) { return expressionFromText(node, yaml_.asExpressionText(node, path), path); }

  IntExpr expressionFromText(const YAML::Node& node, const std::string& text, const std::string& path) {
    auto e = IntExpr::parse(text);
    if (!e) yaml_.fail(node, path, e.error());
    for (const auto& name : e->names()) {
      if (!problem_.isSizeName(name)) {
        std::string sizes;
        for (const auto& [k, v] : problem_.sizeSets.front().sizes) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", k);
        yaml_.fail(node, path, fmt::format("'{}' is not a size name of {} (sizes: {})", name, problem_.id, sizes));
      }
    }
    return std::move(e).value();
  }

  std::vector<IntExpr> dims(const YAML::Node& node, const std::string& path, std::size_t maxDims = 3) {
    std::vector<IntExpr> out;
    if (node.IsScalar()) {
      out.push_back(expression(node, path));
      return out;
    }
    const auto items = yaml_.expressionItems(node, path);
    if (items.empty() || items.size() > maxDims) yaml_.fail(node, path, fmt::format("needs 1 to {} dimensions", maxDims));
    for (const auto& item : items) {
      if (item.text.empty()) yaml_.fail(item.node, item.path, "expected an integer or an expression over size names");
      out.push_back(expressionFromText(item.node, item.text, item.path));
    }
    return out;
  }

  void parseWorkspace(const YAML::Node& node, LaunchManifest& m) {
    yaml_.expectMap(node, "workspace");
    for (const auto& entry : node) {
      TensorSpec t;
      t.name = yaml_.asKey(entry.first, "workspace");
      const std::string path = joinPath("workspace", t.name);
      static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
      if (!std::regex_match(t.name, kIdentifier)) yaml_.fail(entry.first, path, "workspace names must be identifiers");
      if (problem_.findTensor(t.name) || problem_.isSizeName(t.name) || isBuffer(m, t.name)) {
        yaml_.fail(entry.first, path, "name already used by an input, output, size or workspace buffer");
      }
      yaml_.onlyKeys(entry.second, path, {"dtype", "shape"});
      const YAML::Node dtypeNode = yaml_.require(entry.second, "dtype", path);
      const auto dtype = parseDType(yaml_.asString(dtypeNode, joinPath(path, "dtype")));
      if (!dtype) yaml_.fail(dtypeNode, joinPath(path, "dtype"), fmt::format("unknown dtype (known: {})", kDTypeList));
      t.dtype = *dtype;
      const YAML::Node shape = yaml_.require(entry.second, "shape", path);
      t.shape = dims(shape, joinPath(path, "shape"), 8);
      m.workspace.push_back(std::move(t));
    }
  }

  KernelLaunch parseLaunch(const YAML::Node& node, const std::string& path, const LaunchManifest& m) {
    yaml_.onlyKeys(node, path, {"kernel", "grid", "block", "shared_bytes", "args"});
    KernelLaunch l;
    const YAML::Node kernel = yaml_.require(node, "kernel", path);
    l.kernel = yaml_.asString(kernel, joinPath(path, "kernel"));
    static const std::regex kNameExpression("[A-Za-z_][A-Za-z0-9_:]*(<[A-Za-z0-9_:<>, ]*>)?");
    if (!std::regex_match(l.kernel, kNameExpression)) {
      yaml_.fail(kernel, joinPath(path, "kernel"),
                 fmt::format("'{}' is not a kernel name (an identifier, optionally with template arguments)", l.kernel));
    }
    l.grid = dims(yaml_.require(node, "grid", path), joinPath(path, "grid"));
    l.block = dims(yaml_.require(node, "block", path), joinPath(path, "block"));
    if (const YAML::Node s = node["shared_bytes"]) l.sharedBytes = expression(s, joinPath(path, "shared_bytes"));
    const YAML::Node args = yaml_.require(node, "args", path);
    for (const auto& item : yaml_.expressionItems(args, joinPath(path, "args"))) l.args.push_back(parseArg(item, m));
    return l;
  }

  LaunchArg parseArg(const YamlReader::SequenceItem& item, const LaunchManifest& m) {
    const YAML::Node& node = item.node;
    const std::string& path = item.path;
    LaunchArg a;
    if (!node.IsScalar()) {
      yaml_.onlyKeys(node, path, {"size", "type"});
      a.kind = LaunchArg::Kind::scalar;
      a.value = expression(yaml_.require(node, "size", path), joinPath(path, "size"));
      if (const YAML::Node t = node["type"]) {
        const std::string type = yaml_.asString(t, joinPath(path, "type"));
        if (type == "int64")
          a.type = LaunchArg::ScalarType::int64;
        else if (type != "int" && type != "int32")
          yaml_.fail(t, joinPath(path, "type"), "must be int32 (or int) or int64");
      }
      return a;
    }
    const std::string& text = item.text;
    if (isBuffer(m, text)) {
      a.buffer = text;
      return a;
    }
    a.kind = LaunchArg::Kind::scalar;
    auto e = IntExpr::parse(text);
    if (!e) yaml_.fail(node, path, fmt::format("'{}' is not an input, output or workspace name, nor a size expression", text));
    for (const auto& name : e->names()) {
      if (!problem_.isSizeName(name)) {
        yaml_.fail(node, path, fmt::format("'{}' is not an input, output, workspace buffer or size of {}", name, problem_.id));
      }
    }
    a.value = std::move(e).value();
    return a;
  }

  const Problem& problem_;
  YamlReader yaml_;
};

Expected<std::array<std::int64_t, 3>> evaluateDims(const std::vector<IntExpr>& dims, const SizeBindings& sizes, std::string_view what) {
  std::array<std::int64_t, 3> out{1, 1, 1};
  static constexpr char kAxis[] = {'x', 'y', 'z'};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    auto v = dims[i].evaluate(sizes);
    if (!v) return Unexpected{fmt::format("{}.{}: {}", what, kAxis[i], v.error())};
    out[i] = *v;
  }
  return out;
}

std::array<std::uint32_t, 3> narrow(const std::array<std::int64_t, 3>& dims) {  // after checkLaunchConfiguration
  return {static_cast<std::uint32_t>(dims[0]), static_cast<std::uint32_t>(dims[1]), static_cast<std::uint32_t>(dims[2])};
}

}  // namespace

std::vector<std::string> LaunchManifest::kernelNames() const {
  std::vector<std::string> names;
  for (const auto& l : launches) {
    if (std::find(names.begin(), names.end(), l.kernel) == names.end()) names.push_back(l.kernel);
  }
  return names;
}

Expected<LaunchManifest> parseLaunchManifest(std::string_view source, const Problem& problem) {
  const std::size_t open = source.find(kOpen);
  if (open == std::string_view::npos) {
    return Unexpected{"no launch manifest: the source must start with a /*@cuset ... */ comment block (see docs/candidate-format.md)"};
  }
  const std::size_t bodyStart = open + kOpen.size();
  const std::size_t close = source.find("*/", bodyStart);
  if (close == std::string_view::npos) return Unexpected{"the /*@cuset manifest comment is never closed with */"};
  if (source.find(kOpen, close) != std::string_view::npos) return Unexpected{"more than one /*@cuset manifest in the source"};
  const std::string_view body = source.substr(bodyStart, close - bodyStart);
  const int lineOffset = static_cast<int>(std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(bodyStart), '\n'));
  try {
    ManifestParser parser(problem, lineOffset);
    LaunchManifest m = parser.yaml().guard([&] { return parser.parse(body, lineOffset + 1); });
    for (const auto& set : problem.sizeSets) {
      auto resolved = resolveLaunches(m, set.sizes);
      if (!resolved) return Unexpected{fmt::format("manifest: with sizes '{}': {}", set.name, resolved.error())};
    }
    return m;
  } catch (const Error& e) {
    return Unexpected{e.what()};
  }
}

Expected<std::vector<ResolvedLaunch>> resolveLaunches(const LaunchManifest& manifest, const SizeBindings& sizes) {
  for (const auto& w : manifest.workspace) {
    auto shape = evaluateShape(w, sizes);
    if (!shape) return Unexpected{fmt::format("workspace: {}", shape.error())};
  }
  std::vector<ResolvedLaunch> out;
  for (std::size_t i = 0; i < manifest.launches.size(); ++i) {
    const KernelLaunch& l = manifest.launches[i];
    const std::string where = fmt::format("launch {} ({})", i, l.kernel);
    ResolvedLaunch r;
    r.kernel = l.kernel;
    auto grid = evaluateDims(l.grid, sizes, where + " grid");
    if (!grid) return Unexpected{grid.error()};
    auto block = evaluateDims(l.block, sizes, where + " block");
    if (!block) return Unexpected{block.error()};
    auto shared = l.sharedBytes.evaluate(sizes);
    if (!shared) return Unexpected{fmt::format("{} shared_bytes: {}", where, shared.error())};
    if (auto v = checkLaunchConfiguration(where, *grid, *block, *shared)) return Unexpected{v->message};
    r.grid = narrow(*grid);
    r.block = narrow(*block);
    r.sharedBytes = static_cast<std::uint32_t>(*shared);
    for (const auto& a : l.args) {
      ResolvedArg ra{a.kind, a.buffer, 0, a.type};
      if (a.kind == LaunchArg::Kind::scalar) {
        auto v = a.value.evaluate(sizes);
        if (!v) return Unexpected{fmt::format("{} argument: {}", where, v.error())};
        if (a.type == LaunchArg::ScalarType::int32 &&
            (*v > std::numeric_limits<std::int32_t>::max() || *v < std::numeric_limits<std::int32_t>::min())) {
          return Unexpected{fmt::format("{}: argument '{}' = {} does not fit in int (use {{size: ..., type: int64}})", where, a.value.text(), *v)};
        }
        ra.value = *v;
      }
      r.args.push_back(std::move(ra));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace cuset
