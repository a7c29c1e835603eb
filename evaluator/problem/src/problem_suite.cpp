#include "cuset/evaluator/problem/problem_suite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/problem/large_sizes.hpp"
#include "cuset/common/yaml_util.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

bool isIdentifier(const std::string& s) {
  static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, kIdentifier);
}

// Tensor names may be dotted paths (`conv1.weight`, `layers.0.bias`): lifted parameters keep the
// names PyTorch gives them.
bool isTensorName(const std::string& s) {
  static const std::regex kPath("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*");
  return std::regex_match(s, kPath);
}

// A YAML scalar that is a number rather than an expression such as `V` or `V - 1`.
bool looksNumeric(const std::string& s) {
  static const std::regex kNumber(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  return std::regex_match(s, kNumber);
}

class ProblemParser {
 public:
  ProblemParser(const std::string& source, fs::path directory) : yaml_(source), directory_(std::move(directory)) {}

  const YamlReader& yaml() const { return yaml_; }

  Problem parse(std::string_view text) {
    const YAML::Node root = yaml_.parse(text);
    if (!root.IsMap()) yaml_.fail(root, "", "expected a mapping at the top level (name:, level:, sizes:, ...)");
    yaml_.onlyKeys(root, "",
                   {"name", "level", "tags", "description", "sizes", "inputs", "outputs", "reference", "tolerance", "cost", "reference_precision",
                    "reference_archive", "input_transform", "origin", "defect"});
    Problem p;
    p.directory = directory_;
    p.name = yaml_.asString(yaml_.require(root, "name", ""), "name");
    if (!isIdentifier(p.name)) yaml_.fail(root["name"], "name", "must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    const YAML::Node levelNode = yaml_.require(root, "level", "");
    const std::int64_t level = yaml_.asInt64(levelNode, "level");
    if (level < 1 || level > 9) yaml_.fail(levelNode, "level", "must be between 1 and 9");
    p.level = static_cast<int>(level);
    p.id = fmt::format("level{}/{}", p.level, p.name);
    if (const YAML::Node tags = root["tags"]) {
      yaml_.expectSequence(tags, "tags");
      for (std::size_t i = 0; i < tags.size(); ++i) p.tags.push_back(yaml_.asString(tags[i], indexPath("tags", i)));
    }
    if (const YAML::Node d = root["description"]) p.description = yaml_.asString(d, "description");
    parseSizes(yaml_.require(root, "sizes", ""), p);
    if (const YAML::Node t = root["input_transform"]) parseInputTransform(t, p);
    parseTensors(yaml_.require(root, "inputs", ""), "inputs", true, p.inputs, p);
    parseTensors(yaml_.require(root, "outputs", ""), "outputs", false, p.outputs, p);
    if (p.outputs.empty()) yaml_.fail(root["outputs"], "outputs", "a problem needs at least one output");
    if (p.inputTransform) checkTransformProduces(root["input_transform"], p);
    if (root["reference"] && root["reference_archive"]) {
      yaml_.fail(root["reference_archive"], "reference_archive", "give either 'reference' (TorchScript source) or 'reference_archive', not both");
    }
    if (const YAML::Node archive = root["reference_archive"]) {
      parseArchiveReference(archive, p);
    } else {
      const YAML::Node ref = yaml_.require(root, "reference", "");
      p.reference = yaml_.asString(ref, "reference");
      if (p.reference.find("def forward") == std::string::npos) {
        yaml_.fail(ref, "reference", "must define a TorchScript function 'def forward(...)'");
      }
    }
    if (const YAML::Node origin = root["origin"]) parseOrigin(origin, p);
    if (const YAML::Node defect = root["defect"]) parseDefect(defect, p);
    if (const YAML::Node prec = root["reference_precision"]) {
      const std::string s = yaml_.asString(prec, "reference_precision");
      if (s != "float32" && s != "float64") yaml_.fail(prec, "reference_precision", "must be float32 or float64");
      p.referenceInFloat64 = s == "float64";
    }
    parseTolerance(root["tolerance"], p);
    parseCost(root["cost"], p);
    checkNameClashes(p);
    return p;
  }

 private:
  void parseSizes(const YAML::Node& node, Problem& p) {
    yaml_.expectMap(node, "sizes");
    for (const auto& entry : node) {
      const std::string setName = yaml_.asKey(entry.first, "sizes");
      const std::string path = joinPath("sizes", setName);
      if (!isIdentifier(setName)) yaml_.fail(entry.first, path, "size set names must be identifiers");
      yaml_.expectMap(entry.second, path);
      SizeSet set{setName, {}};
      for (const auto& dim : entry.second) {
        const std::string dimName = yaml_.asKey(dim.first, path);
        const std::string dimPath = joinPath(path, dimName);
        if (!isIdentifier(dimName)) yaml_.fail(dim.first, dimPath, "size names must be identifiers");
        const std::int64_t value = yaml_.asInt64(dim.second, dimPath);
        if (value < 1) yaml_.fail(dim.second, dimPath, fmt::format("sizes must be >= 1, got {}", value));
        set.sizes.emplace(dimName, value);
      }
      if (!p.sizeSets.empty() && !sameNames(p.sizeSets.front().sizes, set.sizes)) {
        yaml_.fail(entry.second, path, fmt::format("must define the same size names as '{}'", p.sizeSets.front().name));
      }
      p.sizeSets.push_back(std::move(set));
    }
    if (p.sizeSets.empty()) yaml_.fail(node, "sizes", "at least one size set is required ('small' is the one the CPU simulator and CI run)");
  }

  static bool sameNames(const SizeBindings& a, const SizeBindings& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) { return x.first == y.first; });
  }

  IntExpr parseExpr(const YAML::Node& node, const std::string& path, const Problem& p) {
    return parseExprText(node, yaml_.asExpressionText(node, path), path, p);
  }

  IntExpr parseExprText(const YAML::Node& node, const std::string& text, const std::string& path, const Problem& p) {
    auto e = IntExpr::parse(text);
    if (!e) yaml_.fail(node, path, e.error());
    for (const auto& name : e->names()) {
      if (!p.isSizeName(name)) yaml_.fail(node, path, fmt::format("'{}' is not a size name of this problem", name));
    }
    return std::move(e).value();
  }

  // size set -> archive file, one per size set of the problem, each an existing file in its folder.
  std::map<std::string, fs::path> parseArchives(const YAML::Node& node, const std::string& path, const Problem& p) {
    yaml_.expectMap(node, path);
    std::map<std::string, fs::path> out;
    for (const auto& entry : node) {
      const std::string set = yaml_.asKey(entry.first, path);
      const std::string setPath = joinPath(path, set);
      if (!p.findSizeSet(set)) yaml_.fail(entry.first, setPath, fmt::format("'{}' is not a size set of this problem", set));
      const fs::path file = yaml_.asString(entry.second, setPath);
      if (file.is_absolute() || file.lexically_normal().string().starts_with("..")) {
        yaml_.fail(entry.second, setPath, "must be a file inside the problem's folder");
      }
      if (!fs::is_regular_file(directory_ / file)) {
        yaml_.fail(entry.second, setPath, fmt::format("archive '{}' not found", (directory_ / file).string()));
      }
      out.emplace(set, file);
    }
    for (const auto& set : p.sizeSets) {
      if (!out.contains(set.name)) yaml_.fail(node, path, fmt::format("no archive for size set '{}'", set.name));
    }
    return out;
  }

  void parseArchiveReference(const YAML::Node& node, Problem& p) {
    yaml_.onlyKeys(node, "reference_archive", {"archives", "args", "attributes"});
    ArchiveReference a;
    a.archives = parseArchives(yaml_.require(node, "archives", "reference_archive"), "reference_archive.archives", p);
    if (const YAML::Node attrs = node["attributes"]) {
      yaml_.expectSequence(attrs, "reference_archive.attributes");
      for (std::size_t i = 0; i < attrs.size(); ++i) {
        const std::string path = indexPath("reference_archive.attributes", i);
        const std::string name = yaml_.asString(attrs[i], path);
        if (!p.inputIndex(name)) yaml_.fail(attrs[i], path, fmt::format("'{}' is not an input", name));
        a.attributes.push_back(name);
      }
    }
    if (const YAML::Node args = node["args"]) {
      yaml_.expectSequence(args, "reference_archive.args");
      for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string path = indexPath("reference_archive.args", i);
        ArchiveReference::Arg arg;
        if (args[i].IsMap()) {
          yaml_.onlyKeys(args[i], path, {"int", "float"});
          if (const YAML::Node v = args[i]["int"]) {
            arg.number = static_cast<double>(yaml_.asInt64(v, joinPath(path, "int")));
            arg.isInteger = true;
          } else {
            arg.number = yaml_.asDouble(yaml_.require(args[i], "float", path), joinPath(path, "float"));
          }
        } else {
          arg.input = yaml_.asString(args[i], path);
          if (!p.inputIndex(arg.input))
            yaml_.fail(args[i], path, fmt::format("'{}' is not an input (numbers are written {{int: N}} or {{float: X}})", arg.input));
        }
        a.args.push_back(std::move(arg));
      }
    }
    p.referenceArchive = std::move(a);
  }

  void parseInputTransform(const YAML::Node& node, Problem& p) {
    yaml_.onlyKeys(node, "input_transform", {"draws", "archives", "produces"});
    InputTransform t;
    t.archives = parseArchives(yaml_.require(node, "archives", "input_transform"), "input_transform.archives", p);
    const YAML::Node produces = yaml_.require(node, "produces", "input_transform");
    yaml_.expectSequence(produces, "input_transform.produces");
    for (std::size_t i = 0; i < produces.size(); ++i) t.produces.push_back(yaml_.asString(produces[i], indexPath("input_transform.produces", i)));
    p.inputTransform = std::move(t);
    std::vector<TensorSpec> draws;
    parseTensors(yaml_.require(node, "draws", "input_transform"), "input_transform.draws", true, draws, p);
    p.inputTransform->draws = std::move(draws);
  }

  void checkTransformProduces(const YAML::Node& node, const Problem& p) {
    for (const auto& name : p.inputTransform->produces) {
      if (!p.inputIndex(name)) {
        yaml_.fail(node["produces"], "input_transform.produces", fmt::format("'{}' is not an input", name));
      }
    }
    for (const auto& d : p.inputTransform->draws) {
      if (p.findTensor(d.name)) yaml_.fail(node["draws"], "input_transform.draws", fmt::format("draw '{}' has the name of a tensor", d.name));
    }
  }

  void parseDefect(const YAML::Node& node, Problem& p) {
    yaml_.onlyKeys(node, "defect", {"kind", "reason"});
    ProblemDefect d;
    const YAML::Node kind = yaml_.require(node, "kind", "defect");
    d.kind = yaml_.asString(kind, "defect.kind");
    if (d.kind != "degenerate" && d.kind != "stochastic") yaml_.fail(kind, "defect.kind", "must be 'degenerate' or 'stochastic'");
    d.reason = yaml_.asString(yaml_.require(node, "reason", "defect"), "defect.reason");
    p.defect = std::move(d);
  }

  void parseOrigin(const YAML::Node& node, Problem& p) {
    yaml_.onlyKeys(node, "origin", {"suite", "commit", "level", "number", "file", "source", "size_overrides"});
    ProblemOrigin o;
    o.suite = yaml_.asString(yaml_.require(node, "suite", "origin"), "origin.suite");
    if (const YAML::Node v = node["commit"]) o.commit = yaml_.asString(v, "origin.commit");
    if (const YAML::Node v = node["level"]) o.level = static_cast<int>(yaml_.asInt64(v, "origin.level"));
    if (const YAML::Node v = node["number"]) o.number = static_cast<int>(yaml_.asInt64(v, "origin.number"));
    if (const YAML::Node v = node["file"]) o.file = yaml_.asString(v, "origin.file");
    if (const YAML::Node v = node["source"]) {
      o.sourceFile = yaml_.asString(v, "origin.source");
      const fs::path file = directory_ / o.sourceFile;
      if (fs::path(o.sourceFile).is_absolute() || !fs::is_regular_file(file)) {
        yaml_.fail(v, "origin.source", fmt::format("'{}' is not a file in the problem's folder", file.string()));
      }
      o.source = readFile(file);
    }
    if (const YAML::Node v = node["size_overrides"]) {
      yaml_.expectMap(v, "origin.size_overrides");
      for (const auto& set : v) {
        const std::string setName = yaml_.asKey(set.first, "origin.size_overrides");
        const std::string path = joinPath("origin.size_overrides", setName);
        yaml_.expectMap(set.second, path);
        auto& knobs = o.sizeOverrides[setName];
        for (const auto& knob : set.second) {
          const std::string name = yaml_.asKey(knob.first, path);
          knobs[name] = yaml_.asInt64(knob.second, joinPath(path, name));
        }
      }
    }
    p.origin = std::move(o);
  }

  void parseTensors(const YAML::Node& node, const std::string& section, bool isInput, std::vector<TensorSpec>& out, const Problem& p) {
    yaml_.expectMap(node, section);
    for (const auto& entry : node) {
      TensorSpec t;
      t.name = yaml_.asKey(entry.first, section);
      const std::string path = joinPath(section, t.name);
      if (!isTensorName(t.name)) yaml_.fail(entry.first, path, "tensor names must be identifiers or dotted paths of them (conv.weight)");
      if (p.findTensor(t.name) || std::any_of(out.begin(), out.end(), [&](auto& o) { return o.name == t.name; })) {
        yaml_.fail(entry.first, path, "duplicate tensor name");
      }
      const bool produced = isInput && p.inputTransform && p.inputTransform->producesInput(t.name);
      if (produced)
        yaml_.onlyKeys(entry.second, path, {"dtype", "shape"});
      else if (isInput)
        yaml_.onlyKeys(entry.second, path, {"dtype", "shape", "init"});
      else
        yaml_.onlyKeys(entry.second, path, {"dtype", "shape"});
      const YAML::Node dtypeNode = yaml_.require(entry.second, "dtype", path);
      const auto dtype = parseDType(yaml_.asString(dtypeNode, joinPath(path, "dtype")));
      if (!dtype) yaml_.fail(dtypeNode, joinPath(path, "dtype"), fmt::format("unknown dtype '{}' (known: {})", dtypeNode.Scalar(), kDTypeList));
      t.dtype = *dtype;
      const YAML::Node shape = yaml_.require(entry.second, "shape", path);
      for (const auto& item : yaml_.expressionItems(shape, joinPath(path, "shape"))) {
        if (item.text.empty()) yaml_.fail(item.node, item.path, "expected an integer or an expression over size names");
        t.shape.push_back(parseExprText(item.node, item.text, item.path, p));
      }
      for (const auto& set : p.sizeSets) {
        auto dims = evaluateShape(t, set.sizes);
        if (!dims) yaml_.fail(shape, joinPath(path, "shape"), fmt::format("with sizes '{}': {}", set.name, dims.error()));
      }
      if (isInput) {
        t.init = defaultDistribution(t.dtype);
        if (const YAML::Node init = entry.second["init"]) {
          t.init = parseDistribution(init, joinPath(path, "init"), t.dtype, 0, p);
          for (const auto& set : p.sizeSets) {
            auto resolved = t.init.resolvedFor(set.sizes);
            if (!resolved) yaml_.fail(init, joinPath(path, "init"), fmt::format("with sizes '{}': {}", set.name, resolved.error()));
          }
        }
      }
      out.push_back(std::move(t));
    }
  }

  static Distribution defaultDistribution(DType dtype) {
    Distribution d;
    if (dtype == DType::boolean) {
      d.kind = Distribution::Kind::randint;
      d.low = 0;
      d.high = 2;
    } else if (!isFloating(dtype)) {
      d.kind = Distribution::Kind::randint;
      d.low = 0;
      d.high = 100;
    }
    return d;
  }

  Distribution parseDistribution(const YAML::Node& node, const std::string& path, DType dtype, int depth, const Problem& p) {
    yaml_.expectMap(node, path);
    const YAML::Node distNode = yaml_.require(node, "dist", path);
    const std::string dist = yaml_.asString(distNode, joinPath(path, "dist"));
    Distribution d;
    auto number = [&](const char* key, double fallback) {
      const YAML::Node v = node[key];
      if (!v) return fallback;
      const double x = yaml_.asDouble(v, joinPath(path, key));
      if (!std::isfinite(x)) yaml_.fail(v, joinPath(path, key), "must be finite");
      return x;
    };
    if (dist == "normal") {
      yaml_.onlyKeys(node, path, {"dist", "mean", "std", "weight"});
      d.kind = Distribution::Kind::normal;
      d.mean = number("mean", 0.0);
      d.stddev = number("std", 1.0);
      if (d.stddev < 0) yaml_.fail(node["std"], joinPath(path, "std"), "must be >= 0");
      if (!isFloating(dtype))
        yaml_.fail(distNode, joinPath(path, "dist"), fmt::format("normal needs a floating dtype, not {} (use randint)", dtypeName(dtype)));
    } else if (dist == "uniform" || dist == "randint") {
      yaml_.onlyKeys(node, path, {"dist", "low", "high", "weight"});
      d.kind = dist == "uniform" ? Distribution::Kind::uniform : Distribution::Kind::randint;
      // randint bounds may be size expressions; their range is checked per size set by the caller.
      auto sizeBound = [&](const char* key) -> std::optional<IntExpr> {
        const YAML::Node v = node[key];
        if (dist != "randint" || !v || !v.IsScalar() || looksNumeric(v.Scalar())) return std::nullopt;
        return parseExprText(v, v.Scalar(), joinPath(path, key), p);
      };
      d.lowSize = sizeBound("low");
      d.highSize = sizeBound("high");
      d.low = d.lowSize ? 0.0 : number("low", 0.0);
      d.high = d.highSize ? 1.0 : number("high", dist == "uniform" ? 1.0 : (dtype == DType::boolean ? 2.0 : 100.0));
      if (d.lowSize || d.highSize) {
        if (dtype == DType::boolean) yaml_.fail(node, path, "randint for bool takes numeric bounds");
      } else if (!(d.low < d.high))
        yaml_.fail(node, path, fmt::format("needs low < high (got low={}, high={})", d.low, d.high));
      if (d.kind == Distribution::Kind::uniform && !isFloating(dtype)) {
        yaml_.fail(distNode, joinPath(path, "dist"), fmt::format("uniform needs a floating dtype, not {} (use randint)", dtypeName(dtype)));
      }
      if (d.kind == Distribution::Kind::randint) {
        if (d.low != std::floor(d.low) || d.high != std::floor(d.high)) yaml_.fail(node, path, "randint bounds must be integers");
        if (dtype == DType::boolean && (d.low < 0 || d.high > 2)) yaml_.fail(node, path, "randint for bool must lie within [0, 2)");
        if (std::abs(d.low) > 9.0e15 || std::abs(d.high) > 9.0e15) yaml_.fail(node, path, "randint bounds must lie within +-9e15");
      }
    } else if (dist == "mix") {
      yaml_.onlyKeys(node, path, {"dist", "components", "weight"});
      if (depth > 0) yaml_.fail(distNode, joinPath(path, "dist"), "mixes cannot be nested");
      d.kind = Distribution::Kind::mix;
      const YAML::Node comps = yaml_.require(node, "components", path);
      yaml_.expectSequence(comps, joinPath(path, "components"));
      if (comps.size() < 2) yaml_.fail(comps, joinPath(path, "components"), "a mix needs at least two components");
      double total = 0;
      for (std::size_t i = 0; i < comps.size(); ++i) {
        const std::string cpath = indexPath(joinPath(path, "components"), i);
        Distribution c = parseDistribution(comps[i], cpath, dtype, depth + 1, p);
        double w = 1.0;
        if (const YAML::Node wn = comps[i]["weight"]) w = yaml_.asDouble(wn, joinPath(cpath, "weight"));
        if (!(w > 0) || !std::isfinite(w)) yaml_.fail(comps[i], joinPath(cpath, "weight"), "must be a positive number");
        total += w;
        d.components.push_back({w, std::move(c)});
      }
      for (auto& [w, c] : d.components) w /= total;
    } else {
      yaml_.fail(distNode, joinPath(path, "dist"), fmt::format("unknown distribution '{}' (known: normal, uniform, randint, mix)", dist));
    }
    return d;
  }

  void parseTolerance(const YAML::Node& node, Problem& p) {
    DType loosest = DType::float32;
    for (const auto& o : p.outputs) {
      if (defaultTolerance(o.dtype).rtol > defaultTolerance(loosest).rtol) loosest = o.dtype;
    }
    bool anyFloat = std::any_of(p.outputs.begin(), p.outputs.end(), [](auto& o) { return isFloating(o.dtype); });
    p.tolerance = anyFloat ? defaultTolerance(loosest) : Tolerance{0, 0};
    if (!node) return;
    yaml_.onlyKeys(node, "tolerance", {"atol", "rtol"});
    p.toleranceGiven = true;
    for (const char* key : {"atol", "rtol"}) {
      const YAML::Node v = yaml_.require(node, key, "tolerance");
      const double x = yaml_.asDouble(v, joinPath("tolerance", key));
      if (!(x >= 0) || !std::isfinite(x)) yaml_.fail(v, joinPath("tolerance", key), "must be a finite number >= 0");
      if (x > 1.0) yaml_.fail(v, joinPath("tolerance", key), fmt::format("{} is too loose to mean anything (must be <= 1)", x));
      (std::string_view(key) == "atol" ? p.tolerance.atol : p.tolerance.rtol) = x;
    }
  }

  void parseCost(const YAML::Node& node, Problem& p) {
    if (!node) return;
    if (node.IsMap() && !node["flops"] && !node["bytes"]) {  // per size set: {small: {flops: N, bytes: N}, ...}
      for (const auto& entry : node) {
        const std::string set = yaml_.asKey(entry.first, "cost");
        const std::string path = joinPath("cost", set);
        if (!p.findSizeSet(set)) yaml_.fail(entry.first, path, fmt::format("'{}' is neither flops, bytes nor a size set", set));
        yaml_.onlyKeys(entry.second, path, {"flops", "bytes"});
        CostLiteral c;
        for (auto [key, field] : {std::pair{"flops", &c.flops}, std::pair{"bytes", &c.bytes}}) {
          if (const YAML::Node v = entry.second[key]) {
            *field = yaml_.asInt64(v, joinPath(path, key));
            if (**field < 0) yaml_.fail(v, joinPath(path, key), "must be >= 0");
          }
        }
        p.costPerSet.emplace(set, c);
      }
      return;
    }
    yaml_.onlyKeys(node, "cost", {"flops", "bytes"});
    auto one = [&](const char* key, std::optional<IntExpr>& out) {
      const YAML::Node v = node[key];
      if (!v) return;
      const std::string path = joinPath("cost", key);
      out = parseExpr(v, path, p);
      for (const auto& set : p.sizeSets) {
        auto value = out->evaluate(set.sizes);
        if (!value) yaml_.fail(v, path, fmt::format("with sizes '{}': {}", set.name, value.error()));
        if (*value < 0) yaml_.fail(v, path, fmt::format("with sizes '{}': negative cost {}", set.name, *value));
      }
    };
    one("flops", p.costFlops);
    one("bytes", p.costBytes);
  }

  void checkNameClashes(const Problem& p) {
    for (const auto& [sizeName, value] : p.sizeSets.front().sizes) {
      if (p.findTensor(sizeName)) {
        throw makeError("{}: '{}' is both a size name and a tensor name", yaml_.source(), sizeName);
      }
    }
  }

  YamlReader yaml_;
  fs::path directory_;
};

}  // namespace

Problem parseProblem(std::string_view yamlText, const std::string& source, const fs::path& directory) {
  ProblemParser parser(source, directory);
  return parser.yaml().guard([&] { return parser.parse(yamlText); });
}

Problem loadProblem(const fs::path& problemDir) {
  const fs::path file = problemDir / "problem.yaml";
  Problem p = parseProblem(readFile(file), file.string(), problemDir);
  // The folder layout is part of the contract: problems/levelN/<name>/problem.yaml.
  if (problemDir.filename() != p.name) {
    throw makeError("{}: name '{}' does not match its folder '{}'", file.string(), p.name, problemDir.filename().string());
  }
  const std::string parent = problemDir.parent_path().filename().string();
  if (parent.rfind("level", 0) == 0 && parent != fmt::format("level{}", p.level)) {
    throw makeError("{}: level {} does not match its folder '{}'", file.string(), p.level, parent);
  }
  return p;
}

ProblemSuite ProblemSuite::load(const fs::path& root) {
  if (!fs::is_directory(root)) throw makeError("{}: problems directory not found", root.string());
  ProblemSuite suite;
  suite.root_ = root;
  std::vector<fs::path> dirs;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_regular_file() && it->path().filename() == "problem.yaml") dirs.push_back(it->path().parent_path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    try {
      Problem p = loadProblem(dir);
      if (suite.index_.contains(p.id)) {
        suite.loadErrors_.push_back(fmt::format("{}: duplicate problem id '{}' (also in {})", (dir / "problem.yaml").string(), p.id,
                                                suite.problems_[suite.index_[p.id]].directory.string()));
        continue;
      }
      suite.index_.emplace(p.id, suite.problems_.size());
      suite.problems_.push_back(std::move(p));
    } catch (const Error& e) {
      suite.loadErrors_.emplace_back(e.what());
    }
  }
  if (dirs.empty()) suite.loadErrors_.push_back(fmt::format("{}: no problem.yaml found below this directory", root.string()));
  std::sort(suite.problems_.begin(), suite.problems_.end(), [](const Problem& x, const Problem& y) { return x.id < y.id; });
  suite.index_.clear();
  for (std::size_t i = 0; i < suite.problems_.size(); ++i) suite.index_.emplace(suite.problems_[i].id, i);
  return suite;
}

std::size_t ProblemSuite::addLargeSizeSets(const LargeSizeBudget& budget) {
  std::size_t added = 0;
  for (auto& problem : problems_) added += addLargeSizeSet(problem, budget) ? 1 : 0;
  return added;
}

void ProblemSuite::castFloat32To(DType to, const Tolerance& tolerance) {
  for (auto& problem : problems_) {
    for (auto* specs : {&problem.inputs, &problem.outputs}) {
      for (auto& spec : *specs) {
        if (spec.dtype == DType::float32) spec.dtype = to;
      }
    }
    problem.tolerance = tolerance;
    problem.toleranceGiven = true;
  }
}

const Problem* ProblemSuite::find(std::string_view id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &problems_[it->second];
}

void ProblemSuite::requireNoErrors() const {
  if (loadErrors_.empty()) return;
  std::string all;
  for (const auto& e : loadErrors_) all += "\n  " + e;
  throw makeError("{} problem(s) under {} failed to load:{}", loadErrors_.size(), root_.string(), all);
}

}  // namespace cuset
