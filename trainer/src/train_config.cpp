#include "cuset/trainer/train_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <functional>
#include <numbers>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/yaml_util.hpp"

namespace cuset {
namespace {

nlohmann::json yamlToJson(const YamlReader& y, const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : node) {
      const std::string key = y.asKey(kv.first, path);
      j[key] = yamlToJson(y, kv.second, joinPath(path, key));
    }
    return j;
  }
  if (node.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (std::size_t i = 0; i < node.size(); ++i) j.push_back(yamlToJson(y, node[i], indexPath(path, i)));
    return j;
  }
  if (node.IsNull()) return nullptr;
  const std::string s = node.Scalar();
  try {
    std::size_t used = 0;
    const long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
  } catch (...) {
  }
  try {
    std::size_t used = 0;
    const double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
  }
  if (s == "true") return true;
  if (s == "false") return false;
  return s;
}

}  // namespace

TrainConfig TrainConfig::load(const std::filesystem::path& path) { return parse(readFile(path), path.string(), path.parent_path()); }

namespace {

// A path in the config, relative to the config's folder.
using PathResolver = std::function<std::filesystem::path(const std::string&)>;

void parseModel(const YamlReader& y, const YAML::Node& root, const PathResolver& resolve, TrainConfig& c) {
  const YAML::Node model = y.require(root, "model", "");
  y.onlyKeys(model, "model", {"path", "config"});
  if (auto n = model["path"]) c.modelPath = resolve(y.asString(n, "model.path"));
  if (auto n = model["config"]) {
    y.expectMap(n, "model.config");
    c.modelConfig = yamlToJson(y, n, "model.config");
  }
  if (c.modelPath.empty() == !c.modelConfig) y.fail(model, "model", "give exactly one of 'path' (a pretrained HF folder) or 'config' (random init)");
}

void parseAdapter(const YamlReader& y, const YAML::Node& a, TrainConfig& c) {
  y.onlyKeys(a, "adapter", {"type", "r", "alpha", "dropout", "target_modules", "base_dtype"});
  const YAML::Node type = y.require(a, "type", "adapter");
  if (y.asString(type, "adapter.type") != "lora") y.fail(type, "adapter.type", "must be lora");
  LoraConfig lora;
  if (auto n = a["r"]) lora.r = y.asInt64(n, "adapter.r");
  if (auto n = a["alpha"]) lora.alpha = y.asDouble(n, "adapter.alpha");
  if (auto n = a["dropout"]) lora.dropout = y.asDouble(n, "adapter.dropout");
  if (auto n = a["base_dtype"]) lora.baseDtype = y.asString(n, "adapter.base_dtype");
  if (auto n = a["target_modules"]) {
    y.expectSequence(n, "adapter.target_modules");
    lora.targetModules.clear();
    for (std::size_t i = 0; i < n.size(); ++i) lora.targetModules.push_back(y.asString(n[i], fmt::format("adapter.target_modules[{}]", i)));
  }
  try {
    lora.validate("");
  } catch (const Error& e) {
    y.fail(a, "adapter", e.what());
  }
  // An adapter is saved relative to its base, which must therefore be a folder on disk.
  if (c.modelPath.empty()) y.fail(a, "adapter", "LoRA adapts a pretrained model: give model.path (an HF folder), not model.config");
  c.adapter = lora;
}

void parseTokenizerAndData(const YamlReader& y, const YAML::Node& root, const PathResolver& resolve, TrainConfig& c) {
  if (auto t = root["tokenizer"]) {
    y.onlyKeys(t, "tokenizer", {"path", "train_vocab_size", "chat_template"});
    if (auto n = t["path"]) c.tokenizerPath = resolve(y.asString(n, "tokenizer.path"));
    if (auto n = t["chat_template"]) {
      c.chatTemplatePath = resolve(y.asString(n, "tokenizer.chat_template"));
      if (!std::filesystem::is_regular_file(c.chatTemplatePath)) {
        y.fail(n, "tokenizer.chat_template", fmt::format("{} is not a file (a Jinja chat template)", c.chatTemplatePath.string()));
      }
    }
    if (auto n = t["train_vocab_size"]) {
      const auto v = y.asInt64(n, "tokenizer.train_vocab_size");
      if (v < 260 || v > 1'000'000) y.fail(n, "tokenizer.train_vocab_size", "must be between 260 and 1000000");
      c.trainVocabSize = static_cast<std::size_t>(v);
    }
  }
  const YAML::Node data = y.require(root, "data", "");
  y.onlyKeys(data, "data", {"train", "max_tokens"});
  c.trainData = resolve(y.asString(y.require(data, "train", "data"), "data.train"));
  if (auto n = data["max_tokens"]) c.maxTokens = static_cast<std::size_t>(y.asInt64(n, "data.max_tokens"));
}

// optimizer, batch and steps: what one step does and how many there are.
void parseSchedule(const YamlReader& y, const YAML::Node& root, TrainConfig& c) {
  if (auto o = root["optimizer"]) {
    y.onlyKeys(o, "optimizer", {"lr", "weight_decay", "betas", "warmup_steps", "min_lr_ratio", "grad_clip", "shard_state"});
    if (auto n = o["shard_state"]) c.shardOptimizerState = y.asBool(n, "optimizer.shard_state");
    if (auto n = o["lr"]) c.lr = y.asDouble(n, "optimizer.lr");
    if (auto n = o["weight_decay"]) c.weightDecay = y.asDouble(n, "optimizer.weight_decay");
    if (auto n = o["betas"]) {
      y.expectSequence(n, "optimizer.betas");
      if (n.size() != 2) y.fail(n, "optimizer.betas", "needs two numbers");
      c.betas = {y.asDouble(n[0], "optimizer.betas[0]"), y.asDouble(n[1], "optimizer.betas[1]")};
    }
    if (auto n = o["warmup_steps"]) c.warmupSteps = y.asInt64(n, "optimizer.warmup_steps");
    if (auto n = o["min_lr_ratio"]) c.minLrRatio = y.asDouble(n, "optimizer.min_lr_ratio");
    if (auto n = o["grad_clip"]) c.gradClip = y.asDouble(n, "optimizer.grad_clip");
  }
  if (!(c.lr > 0 && c.lr < 1)) y.fail(root["optimizer"], "optimizer.lr", "must be in (0, 1)");
  if (auto b = root["batch"]) {
    y.onlyKeys(b, "batch", {"size", "accumulation"});
    if (auto n = b["size"]) c.batchSize = y.asInt64(n, "batch.size");
    if (auto n = b["accumulation"]) c.accumulation = y.asInt64(n, "batch.accumulation");
  }
  if (c.batchSize < 1 || c.accumulation < 1) y.fail(root["batch"], "batch", "size and accumulation must be >= 1");
  if (auto s = root["steps"]) {
    y.onlyKeys(s, "steps", {"max", "log_every", "save_every"});
    if (auto n = s["max"]) c.maxSteps = y.asInt64(n, "steps.max");
    if (auto n = s["log_every"]) c.logEvery = y.asInt64(n, "steps.log_every");
    if (auto n = s["save_every"]) c.saveEvery = y.asInt64(n, "steps.save_every");
  }
  if (c.maxSteps < 1 || c.logEvery < 1 || c.saveEvery < 1) y.fail(root["steps"], "steps", "max, log_every and save_every must be >= 1");
}

void parseObjective(const YamlReader& y, const YAML::Node& o, const PathResolver& resolve, ObjectiveConfig& ob) {
  y.onlyKeys(o, "objective", {"type", "confidence", "reference_model", "mask", "regions", "weights", "rho1", "profit"});
  const YAML::Node type = y.require(o, "type", "objective");
  if (!parseObjectiveName(y.asString(type, "objective.type"), ob.kind)) {
    y.fail(type, "objective.type", "unknown objective (known: sft, cuset, cuset-mask-only, cuset-reweight-only, dft, rho1, profit)");
  }
  if (auto n = o["reference_model"]) {
    ob.referenceModel = resolve(y.asString(n, "objective.reference_model")).string();
    if (!std::filesystem::exists(std::filesystem::path(ob.referenceModel) / "config.json")) {
      y.fail(n, "objective.reference_model", fmt::format("{} has no config.json (an HF model folder is expected)", ob.referenceModel));
    }
  }
  if (auto n = o["confidence"]) {
    ob.confidence = y.asString(n, "objective.confidence");
    if (ob.confidence != "self" && ob.confidence != "reference") y.fail(n, "objective.confidence", "must be self or reference");
  }
  auto fraction = [&](const YAML::Node& n, const std::string& field, double& out) {
    out = y.asDouble(n, field);
    if (!(out >= 0.0 && out <= 1.0)) y.fail(n, field, "must be in [0, 1]");
  };
  auto count = [&](const YAML::Node& n, const std::string& field, long& out) {
    out = static_cast<long>(y.asInt64(n, field));
    if (out < 0) y.fail(n, field, "must be >= 0");
  };
  if (auto m = o["mask"]) {
    y.onlyKeys(m, "objective.mask", {"quantile", "mode", "warmup_steps"});
    if (auto n = m["quantile"]) fraction(n, "objective.mask.quantile", ob.maskQuantile);
    if (auto n = m["mode"]) {
      ob.maskMode = y.asString(n, "objective.mask.mode");
      if (ob.maskMode != "low" && ob.maskMode != "high") y.fail(n, "objective.mask.mode", "must be low or high");
    }
    if (auto n = m["warmup_steps"]) count(n, "objective.mask.warmup_steps", ob.maskWarmupSteps);
  }
  if (auto r = o["regions"]) {
    y.onlyKeys(r, "objective.regions", {"threshold", "gap", "min_tokens"});
    if (auto n = r["threshold"]) fraction(n, "objective.regions.threshold", ob.regionThreshold);
    if (auto n = r["gap"]) count(n, "objective.regions.gap", ob.regionGap);
    if (auto n = r["min_tokens"]) count(n, "objective.regions.min_tokens", ob.regionMinTokens);
  }
  if (auto w = o["weights"]) {
    y.onlyKeys(w, "objective.weights", {"alpha", "min", "max"});
    if (auto n = w["alpha"]) ob.alpha = y.asDouble(n, "objective.weights.alpha");
    if (auto n = w["min"]) ob.weightMin = y.asDouble(n, "objective.weights.min");
    if (auto n = w["max"]) ob.weightMax = y.asDouble(n, "objective.weights.max");
    if (!(ob.alpha >= 0 && ob.weightMin > 0 && ob.weightMin <= 1 && ob.weightMax >= 1)) {
      y.fail(w, "objective.weights", "needs alpha >= 0 and 0 < min <= 1 <= max");
    }
  }
  if (auto r = o["rho1"]) {
    y.onlyKeys(r, "objective.rho1", {"top_fraction"});
    if (auto n = r["top_fraction"]) fraction(n, "objective.rho1.top_fraction", ob.rho1TopFraction);
  }
  if (auto p = o["profit"]) {
    y.onlyKeys(p, "objective.profit", {"tau"});
    if (auto n = p["tau"]) fraction(n, "objective.profit.tau", ob.profitTau);
  }
}

}  // namespace

TrainConfig TrainConfig::parse(std::string_view text, const std::string& source, const std::filesystem::path& base) try {
  YamlReader y(source);
  const YAML::Node root = y.parse(text);
  y.onlyKeys(root, "",
             {"seed", "model", "tokenizer", "data", "optimizer", "batch", "steps", "objective", "threads", "device", "precision", "checkpointing",
              "adapter"});
  TrainConfig c;
  c.source = source;
  const PathResolver resolve = [&](const std::string& p) { return std::filesystem::path(p).is_absolute() ? std::filesystem::path(p) : base / p; };
  if (auto n = root["seed"]) c.seed = static_cast<std::uint64_t>(y.asInt64(n, "seed"));
  if (auto n = root["threads"]) c.threads = static_cast<int>(y.asInt64(n, "threads"));
  if (auto n = root["device"]) {
    c.device = y.asString(n, "device");
    if (c.device != "cpu" && c.device != "cuda" && c.device != "auto") y.fail(n, "device", "must be cpu, cuda or auto");
  }
  if (auto n = root["precision"]) {
    c.precision = y.asString(n, "precision");
    if (c.precision != "fp32" && c.precision != "bf16") y.fail(n, "precision", "must be fp32 or bf16");
  }
  if (auto n = root["checkpointing"]) c.activationCheckpointing = y.asBool(n, "checkpointing");
  parseModel(y, root, resolve, c);
  if (auto a = root["adapter"]) parseAdapter(y, a, c);
  parseTokenizerAndData(y, root, resolve, c);
  parseSchedule(y, root, c);
  if (auto o = root["objective"]) parseObjective(y, o, resolve, c.objective);
  return c;
} catch (const YAML::Exception& e) {
  YamlReader(source).failWith(e);  // what the checks above did not name (docs: one error per bad file)
}

double TrainConfig::learningRate(std::int64_t step) const {
  if (warmupSteps > 0 && step < warmupSteps) return lr * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
  const double span = std::max<double>(1.0, static_cast<double>(maxSteps - warmupSteps));
  const double progress = std::min(1.0, static_cast<double>(step - warmupSteps) / span);
  const double minLr = lr * minLrRatio;
  return minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace cuset
