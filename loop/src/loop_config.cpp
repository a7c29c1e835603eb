#include "cuset/loop/loop_config.hpp"

#include <charconv>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/yaml_util.hpp"
#include "cuset/trainer/train_config.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

fs::path resolveAgainst(const fs::path& base, const std::string& p) {
  return fs::path(p).is_absolute() ? fs::path(p) : (base / p).lexically_normal();
}

std::vector<std::string> stringList(const YamlReader& y, const YAML::Node& n, std::string_view path) {
  y.expectSequence(n, path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n.size(); ++i) out.push_back(y.asString(n[i], fmt::format("{}[{}]", path, i)));
  return out;
}

}  // namespace

namespace {

void parseSeeds(const YamlReader& y, const YAML::Node& root, LoopConfig& c) {
  const YAML::Node seeds = y.require(root, "seeds", "");
  y.expectSequence(seeds, "seeds");
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto s = y.asInt64(seeds[i], fmt::format("seeds[{}]", i));
    if (s < 0) y.fail(seeds[i], "seeds", "seeds must be >= 0");
    if (std::find(c.seeds.begin(), c.seeds.end(), static_cast<std::uint64_t>(s)) != c.seeds.end()) y.fail(seeds[i], "seeds", "repeated seed");
    c.seeds.push_back(static_cast<std::uint64_t>(s));
  }
  if (c.seeds.empty() || c.seeds.size() > 100) y.fail(seeds, "seeds", "give 1 to 100 seeds");
}

// Either `synth` (the loop makes the data) or `train` + `heldout` (files made before).
void parseData(const YamlReader& y, const YAML::Node& root, const fs::path& base, LoopConfig& c) {
  const YAML::Node data = y.require(root, "data", "");
  y.onlyKeys(data, "data", {"synth", "train", "heldout"});
  if (auto s = data["synth"]) {
    if (data["train"] || data["heldout"]) y.fail(data, "data", "give either 'synth' or 'train' + 'heldout', not both");
    y.onlyKeys(s, "data.synth",
               {"per_family", "seed", "families", "heldout_families", "heldout_fraction", "heldout_instances", "heldout_variants",
                "heldout_per_family", "trials"});
    synth::SynthOptions o;
    if (auto n = s["per_family"]) o.perFamily = static_cast<std::size_t>(y.asInt64(n, "data.synth.per_family"));
    if (auto n = s["seed"]) o.seed = static_cast<std::uint64_t>(y.asInt64(n, "data.synth.seed"));
    if (auto n = s["families"]) o.families = stringList(y, n, "data.synth.families");
    if (auto n = s["heldout_families"]) o.heldoutFamilies = stringList(y, n, "data.synth.heldout_families");
    if (auto n = s["heldout_fraction"]) o.heldoutVariantFraction = y.asDouble(n, "data.synth.heldout_fraction");
    if (auto n = s["heldout_instances"]) o.heldoutInstances = static_cast<std::size_t>(y.asInt64(n, "data.synth.heldout_instances"));
    if (auto n = s["heldout_variants"]) o.heldoutVariants = static_cast<std::size_t>(y.asInt64(n, "data.synth.heldout_variants"));
    if (auto n = s["heldout_per_family"]) o.heldoutPerFamily = static_cast<std::size_t>(y.asInt64(n, "data.synth.heldout_per_family"));
    if (auto n = s["trials"]) o.trials = static_cast<int>(y.asInt64(n, "data.synth.trials"));
    if (o.perFamily < 1 || o.perFamily > 100000) y.fail(s, "data.synth.per_family", "must be in 1..100000");
    c.synth = o;
  } else {
    c.trainData = resolveAgainst(base, y.asString(y.require(data, "train", "data"), "data.train"));
    c.heldoutDir = resolveAgainst(base, y.asString(y.require(data, "heldout", "data"), "data.heldout"));
    if (!fs::exists(c.trainData)) y.fail(data["train"], "data.train", fmt::format("{} does not exist", c.trainData.string()));
    if (!fs::exists(c.heldoutDir / "heldout.json")) {
      y.fail(data["heldout"], "data.heldout", fmt::format("{} has no heldout.json (made by `cuset data synth`)", c.heldoutDir.string()));
    }
  }
}

// The `train` block every run's training config is made from, less what the loop sets itself.
void parseTrainBlock(const YamlReader& y, const YAML::Node& root, LoopConfig& c) {
  c.train = YAML::Clone(y.require(root, "train", ""));
  y.expectMap(c.train, "train");
  for (const char* key : {"seed", "objective"}) {
    if (c.train[key]) y.fail(c.train[key], fmt::format("train.{}", key), "is set by the loop (see `seeds` and `objectives`)");
  }
  if (c.train["data"] && c.train["data"]["train"]) y.fail(c.train["data"]["train"], "train.data.train", "is set by the loop (see `data`)");
}

void parseObjectives(const YamlReader& y, const YAML::Node& root, LoopConfig& c) {
  const YAML::Node objectives = y.require(root, "objectives", "");
  y.expectSequence(objectives, "objectives");
  for (std::size_t i = 0; i < objectives.size(); ++i) {
    const YAML::Node o = objectives[i];
    const std::string path_ = fmt::format("objectives[{}]", i);
    LoopObjective lo;
    if (o.IsScalar()) {
      lo.name = y.asString(o, path_);
      lo.block = YAML::Node(YAML::NodeType::Map);
      lo.block["type"] = lo.name;
    } else {
      y.expectMap(o, path_);
      lo.block = YAML::Clone(o);
      if (auto n = o["name"]) {
        lo.name = y.asString(n, path_ + ".name");
        lo.block.remove("name");
      } else {
        lo.name = y.asString(y.require(o, "type", path_), path_ + ".type");
      }
    }
    if (lo.name == "untrained" || lo.name.empty() || lo.name.find_first_of("/ \t") != std::string::npos) {
      y.fail(o, path_, "needs a name without spaces or '/', other than 'untrained' (the baseline's)");
    }
    for (const auto& other : c.objectives) {
      if (other.name == lo.name) y.fail(o, path_, fmt::format("objective name '{}' is used twice; give one a `name:`", lo.name));
    }
    c.objectives.push_back(std::move(lo));
  }
  if (c.objectives.empty()) y.fail(objectives, "objectives", "list at least one objective");
}

// The warm start every objective's runs continue from.
void parseBase(const YamlReader& y, const YAML::Node& b, LoopConfig& c) {
  y.onlyKeys(b, "base", {"steps", "seed", "lr", "objective"});
  LoopBase warm;
  warm.steps = y.asInt64(y.require(b, "steps", "base"), "base.steps");
  if (warm.steps < 1) y.fail(b["steps"], "base.steps", "must be >= 1");
  warm.seed = b["seed"] ? static_cast<std::uint64_t>(y.asInt64(b["seed"], "base.seed")) : c.seeds.front();
  if (auto n = b["lr"]) {
    const double lr = y.asDouble(n, "base.lr");
    if (!(lr > 0 && lr < 1)) y.fail(n, "base.lr", "must be in (0, 1)");
    warm.lr = n.Scalar();
  }
  warm.objective = b["objective"] ? YAML::Clone(b["objective"]) : YAML::Load("{type: sft}");
  c.base = warm;
  for (const auto& o : c.objectives) {
    if (o.name == "base") y.fail(b, "base", "an objective is named 'base', which is the warm start's row");
  }
}

void parseGenerate(const YamlReader& y, const YAML::Node& g, LoopConfig& c) {
  y.onlyKeys(g, "generate", {"samples", "temperature", "top_p", "max_new_tokens", "device", "bf16", "threads"});
  if (auto n = g["samples"]) c.samples = static_cast<int>(y.asInt64(n, "generate.samples"));
  if (auto n = g["temperature"]) c.temperature = y.asDouble(n, "generate.temperature");
  if (auto n = g["top_p"]) c.topP = y.asDouble(n, "generate.top_p");
  if (auto n = g["max_new_tokens"]) c.maxNewTokens = static_cast<int>(y.asInt64(n, "generate.max_new_tokens"));
  if (auto n = g["device"]) c.device = y.asString(n, "generate.device");
  if (auto n = g["bf16"]) c.bf16 = y.asBool(n, "generate.bf16");
  if (auto n = g["threads"]) c.threads = static_cast<int>(y.asInt64(n, "generate.threads"));
  if (c.samples < 1 || c.samples > 1000) y.fail(g, "generate.samples", "must be in 1..1000");
  if (c.maxNewTokens < 1) y.fail(g, "generate.max_new_tokens", "must be >= 1");
  if (c.device != "cpu" && c.device != "cuda" && c.device != "auto") y.fail(g["device"], "generate.device", "must be cpu, cuda or auto");
}

void parseEval(const YamlReader& y, const YAML::Node& e, LoopConfig& c) {
  y.onlyKeys(e, "eval", {"backend", "trials", "seed", "sizes", "timer", "max_timing_seconds", "jobs"});
  if (auto n = e["backend"]) c.backend = y.asString(n, "eval.backend");
  if (c.backend != "sim" && c.backend != "cuda" && c.backend != "compile-only")
    y.fail(e["backend"], "eval.backend", "must be sim, cuda or compile-only");
  if (auto n = e["trials"]) c.trials = static_cast<int>(y.asInt64(n, "eval.trials"));
  if (auto n = e["seed"]) c.evalSeed = static_cast<std::uint64_t>(y.asInt64(n, "eval.seed"));
  if (auto n = e["sizes"]) c.sizes = y.asString(n, "eval.sizes");
  if (auto n = e["timer"]) c.timer = y.asString(n, "eval.timer");
  if (auto n = e["max_timing_seconds"]) c.maxTimingSeconds = y.asDouble(n, "eval.max_timing_seconds");
  if (auto n = e["jobs"]) c.jobs = static_cast<std::size_t>(y.asInt64(n, "eval.jobs"));
  if (c.trials < 1 || c.trials > 1000) y.fail(e, "eval.trials", "must be in 1..1000");
}

}  // namespace

LoopConfig LoopConfig::load(const fs::path& path) try {
  YamlReader y(path.string());
  const YAML::Node root = y.parse(readFile(path));
  y.onlyKeys(root, "", {"name", "out", "seeds", "data", "train", "base", "objectives", "baseline", "generate", "eval"});
  LoopConfig c;
  c.source = path;
  const fs::path base = path.parent_path();
  c.name = root["name"] ? y.asString(root["name"], "name") : path.stem().string();
  c.outDir = root["out"] ? resolveAgainst(base, y.asString(root["out"], "out")) : fs::path("runs") / c.name;
  parseSeeds(y, root, c);
  parseData(y, root, base, c);
  parseTrainBlock(y, root, c);
  parseObjectives(y, root, c);
  if (auto n = root["baseline"]) c.baseline = y.asBool(n, "baseline");
  if (auto b = root["base"]) parseBase(y, b, c);
  if (auto g = root["generate"]) parseGenerate(y, g, c);
  if (auto e = root["eval"]) parseEval(y, e, c);
  // Parse every run's training config now, so a typo fails before hours of work, not after.
  const fs::path probeData = c.synth ? fs::path("train.jsonl") : c.trainData;
  for (const auto& o : c.objectives) {
    (void)TrainConfig::parse(c.trainYaml(o, c.seeds.front(), probeData), fmt::format("{} (train, objective '{}')", path.string(), o.name), base);
  }
  if (c.base) (void)TrainConfig::parse(c.baseTrainYaml(probeData), fmt::format("{} (train, base)", path.string()), base);
  return c;
} catch (const YAML::Exception& e) {
  YamlReader(path.string()).failWith(e);
}

std::string LoopConfig::baseTrainYaml(const fs::path& dataFile) const {
  // Clone before changing anything: YAML::Node copies share their node, and assigning through one
  // would rewrite `train` for every later run.
  YAML::Node t = YAML::Clone(train);
  // A malformed `train.steps` is left as it is for TrainConfig::parse to name; yaml-cpp's own
  // exceptions must not escape from here.
  if (t["steps"] && !t["steps"].IsMap()) return renderTrainYaml(t, LoopObjective{"base", base->objective}, base->seed, dataFile, {});
  t["steps"]["max"] = base->steps;
  if (!base->lr.empty()) t["optimizer"]["lr"] = base->lr;
  std::int64_t saveEvery = 0;
  const YAML::Node given = t["steps"]["save_every"];
  const bool isInteger =
      given && given.IsScalar() && std::from_chars(given.Scalar().data(), given.Scalar().data() + given.Scalar().size(), saveEvery).ec == std::errc();
  if (!given || (isInteger && saveEvery > base->steps)) t["steps"]["save_every"] = std::max<std::int64_t>(1, base->steps / 4);
  return renderTrainYaml(t, LoopObjective{"base", base->objective}, base->seed, dataFile, {});
}

std::string LoopConfig::trainYaml(const LoopObjective& objective, std::uint64_t seed, const fs::path& dataFile, const fs::path& warmStart) const {
  return renderTrainYaml(YAML::Clone(train), objective, seed, dataFile, warmStart);
}

std::string LoopConfig::renderTrainYaml(YAML::Node t, const LoopObjective& objective, std::uint64_t seed, const fs::path& dataFile,
                                        const fs::path& warmStart) const {
  const fs::path configDir = source.parent_path();
  const auto absolute = [&](YAML::Node parent, const char* key) {
    if (parent && parent[key] && parent[key].IsScalar())
      parent[key] = fs::absolute(resolveAgainst(configDir, parent[key].as<std::string>())).string();
  };
  if (!warmStart.empty()) {
    YAML::Node model(YAML::NodeType::Map);
    model["path"] = fs::absolute(warmStart).string();
    t["model"] = model;
    t.remove("tokenizer");  // the warm start's own
  }
  absolute(t["model"], "path");
  absolute(t["tokenizer"], "path");
  t["seed"] = seed;
  t["data"]["train"] = fs::absolute(dataFile).string();
  YAML::Node ob = YAML::Clone(objective.block);
  absolute(ob, "reference_model");
  t["objective"] = ob;
  YAML::Emitter out;
  out << t;
  return std::string("# Written by `cuset loop` from ") + source.string() + "; `cuset train --config` runs it as is.\n" + out.c_str() + "\n";
}

void LoopConfig::overrideModelPath(const fs::path& modelDir) {
  if (!fs::exists(modelDir / "config.json")) throw makeError("--model {}: no config.json there (an HF model folder is expected)", modelDir.string());
  YAML::Node model(YAML::NodeType::Map);
  model["path"] = fs::absolute(modelDir).string();
  train["model"] = model;
}

bool LoopConfig::pretrained() const { return train["model"] && train["model"]["path"]; }

}  // namespace cuset
