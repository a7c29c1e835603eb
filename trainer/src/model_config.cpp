#include "cuset/trainer/model_config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"

namespace cuset {
namespace {

// Fields of a config.json that do not change the forward pass (token ids, the saved dtype, training
// hyperparameters with no effect at dropout 0, bookkeeping). Anything neither here nor read below is
// refused by name: a field we do not know may change the model (a sliding window, a quantization,
// partial rotary dimensions), and silently building a different model is the worst outcome.
constexpr std::array<std::string_view, 16> kIgnoredFields = {
    "architectures",  "_name_or_path",  "bos_token_id",         "eos_token_id",    "pad_token_id",
    "torch_dtype",    "dtype",          "transformers_version", "use_cache",       "initializer_range",
    "pretraining_tp", "sliding_window", "max_window_layers",    "tokenizer_class", "_attn_implementation_autoset",
    "model_name"};

constexpr std::array<std::string_view, 20> kReadFields = {
    "model_type",         "vocab_size",          "hidden_size",         "intermediate_size",
    "num_hidden_layers",  "num_attention_heads", "num_key_value_heads", "max_position_embeddings",
    "rms_norm_eps",       "rope_theta",          "tie_word_embeddings", "attention_bias",
    "head_dim",           "rope_scaling",        "hidden_act",          "mlp_bias",
    "use_sliding_window", "attention_dropout",   "layer_types",         "rope_parameters"};

bool among(std::string_view key, auto const& names) { return std::find(names.begin(), names.end(), key) != names.end(); }

std::string_view ropeTypeName(RopeScaling::Type t) {
  switch (t) {
    case RopeScaling::Type::none:
      return "default";
    case RopeScaling::Type::linear:
      return "linear";
    case RopeScaling::Type::dynamic:
      return "dynamic";
    case RopeScaling::Type::llama3:
      return "llama3";
    case RopeScaling::Type::yarn:
      return "yarn";
  }
  return "default";
}

RopeScaling parseRopeScaling(const nlohmann::json& r, const std::string& source) {
  RopeScaling s;
  if (!r.is_object()) throw makeError("{}: rope_scaling must be an object or null", source);
  // Older configs (DeepSeek-Coder, Qwen2.5's long-context recipe) say "type", newer ones "rope_type".
  const std::string type = r.contains("rope_type") ? r["rope_type"].get<std::string>() : r.value("type", std::string("default"));
  if (type == "default") return s;
  if (type == "linear")
    s.type = RopeScaling::Type::linear;
  else if (type == "dynamic")
    s.type = RopeScaling::Type::dynamic;
  else if (type == "llama3")
    s.type = RopeScaling::Type::llama3;
  else if (type == "yarn")
    s.type = RopeScaling::Type::yarn;
  else
    throw makeError("{}: rope_scaling type '{}' is not supported (linear, dynamic, llama3, yarn)", source, type);
  static constexpr std::array<std::string_view, 12> kKnown = {
      "type",      "rope_type", "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings", "attention_factor",
      "beta_fast", "beta_slow", "mscale", "mscale_all_dim",  "truncate"};
  for (const auto& [key, value] : r.items()) {
    if (!among(key, kKnown)) throw makeError("{}: rope_scaling field '{}' is not supported", source, key);
  }
  auto number = [&](const char* key) -> std::optional<double> {
    if (!r.contains(key) || r[key].is_null()) return std::nullopt;
    if (!r[key].is_number()) throw makeError("{}: rope_scaling.{} must be a number", source, key);
    return r[key].get<double>();
  };
  const auto factor = number("factor");
  if (!factor) throw makeError("{}: rope_scaling of type '{}' needs a 'factor'", source, type);
  if (!(*factor >= 1.0) || *factor > 1e6) throw makeError("{}: rope_scaling.factor = {} must be at least 1", source, *factor);
  s.factor = *factor;
  if (const auto original = number("original_max_position_embeddings")) {
    if (!(*original >= 1.0) || *original > double(std::int64_t{1} << 31)) {
      throw makeError("{}: rope_scaling.original_max_position_embeddings = {} is out of range", source, *original);
    }
    s.originalMaxPositions = static_cast<std::int64_t>(*original);
  }
  if (s.type == RopeScaling::Type::llama3) {
    const auto low = number("low_freq_factor"), high = number("high_freq_factor");
    if (!low || !high || !s.originalMaxPositions) {
      throw makeError("{}: rope_scaling of type 'llama3' needs low_freq_factor, high_freq_factor and original_max_position_embeddings", source);
    }
    if (!(*high > *low) || !(*low > 0)) throw makeError("{}: rope_scaling needs 0 < low_freq_factor < high_freq_factor", source);
    s.lowFreqFactor = *low;
    s.highFreqFactor = *high;
  }
  if (s.type == RopeScaling::Type::yarn) {
    s.attentionFactor = number("attention_factor");
    s.betaFast = number("beta_fast").value_or(32.0);
    s.betaSlow = number("beta_slow").value_or(1.0);
    s.mscale = number("mscale");
    s.mscaleAllDim = number("mscale_all_dim");
    if (r.contains("truncate") && r["truncate"] != true) throw makeError("{}: rope_scaling.truncate = false is not supported", source);
  }
  return s;
}

nlohmann::json ropeScalingToJson(const RopeScaling& s) {
  if (s.type == RopeScaling::Type::none) return nullptr;
  nlohmann::json j = {{"rope_type", ropeTypeName(s.type)}, {"factor", s.factor}};
  if (s.originalMaxPositions) j["original_max_position_embeddings"] = *s.originalMaxPositions;
  if (s.type == RopeScaling::Type::llama3) {
    j["low_freq_factor"] = s.lowFreqFactor;
    j["high_freq_factor"] = s.highFreqFactor;
  }
  if (s.type == RopeScaling::Type::yarn) {
    j["beta_fast"] = s.betaFast;
    j["beta_slow"] = s.betaSlow;
    if (s.attentionFactor) j["attention_factor"] = *s.attentionFactor;
    if (s.mscale) j["mscale"] = *s.mscale;
    if (s.mscaleAllDim) j["mscale_all_dim"] = *s.mscaleAllDim;
  }
  return j;
}

}  // namespace

std::int64_t ModelConfig::parameterCount() const {
  const std::int64_t q = numHeads * headDim(), kv = numKvHeads * headDim();
  std::int64_t layer = 2 * hiddenSize * q + 2 * hiddenSize * kv + 3 * hiddenSize * intermediateSize + 2 * hiddenSize;
  if (attentionBias) layer += q + 2 * kv;
  if (qkNorm) layer += 2 * headDim();
  return vocabSize * hiddenSize * (tieWordEmbeddings ? 1 : 2) + numLayers * layer + hiddenSize;
}

ModelConfig ModelConfig::fromJson(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw makeError("{}: config.json must be a JSON object", source);
  for (const auto& [key, value] : j.items()) {
    if (!among(key, kReadFields) && !among(key, kIgnoredFields)) {
      throw makeError("{}: config field '{}' is not supported (it may change the model this trainer would build)", source, key);
    }
  }
  ModelConfig c;
  auto integer = [&](const char* key, std::int64_t fallback, bool required) {
    if (!j.contains(key) || j[key].is_null()) {
      if (required) throw makeError("{}: config.json has no '{}'", source, key);
      return fallback;
    }
    if (!j[key].is_number_integer()) throw makeError("{}: '{}' must be an integer", source, key);
    const auto v = j[key].get<std::int64_t>();
    if (v <= 0 || v > (std::int64_t{1} << 31)) throw makeError("{}: '{}' = {} is out of range", source, key, v);
    return v;
  };
  c.modelType = j.value("model_type", std::string("llama"));
  if (c.modelType != "llama" && c.modelType != "qwen2" && c.modelType != "qwen3" && c.modelType != "mistral") {
    throw makeError("{}: model_type '{}' is not supported (llama, qwen2, qwen3, mistral)", source, c.modelType);
  }
  c.vocabSize = integer("vocab_size", 0, true);
  c.hiddenSize = integer("hidden_size", 0, true);
  c.intermediateSize = integer("intermediate_size", 0, true);
  c.numLayers = integer("num_hidden_layers", 0, true);
  c.numHeads = integer("num_attention_heads", 0, true);
  c.numKvHeads = integer("num_key_value_heads", c.numHeads, false);
  c.maxPositions = integer("max_position_embeddings", 2048, false);
  c.rmsNormEps = j.value("rms_norm_eps", 1e-6);
  c.ropeTheta = j.value("rope_theta", 10000.0);
  c.tieWordEmbeddings = j.value("tie_word_embeddings", false);
  c.attentionBias = j.value("attention_bias", c.modelType == "qwen2");
  c.qkNorm = c.modelType == "qwen3";
  if (j.contains("head_dim") && !j["head_dim"].is_null()) c.explicitHeadDim = integer("head_dim", 0, true);
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) c.ropeScaling = parseRopeScaling(j["rope_scaling"], source);
  // transformers 5 writes rope_theta and the scaling together as rope_parameters ("default": none).
  if (j.contains("rope_parameters") && !j["rope_parameters"].is_null()) {
    nlohmann::json p = j["rope_parameters"];
    if (!p.is_object()) throw makeError("{}: rope_parameters must be an object", source);
    if (p.contains("rope_theta")) {
      if (!p["rope_theta"].is_number()) throw makeError("{}: rope_parameters.rope_theta must be a number", source);
      c.ropeTheta = p["rope_theta"].get<double>();
      p.erase("rope_theta");
    }
    if (p.value("rope_type", std::string("default")) != "default") {
      c.ropeScaling = parseRopeScaling(p, source + " rope_parameters");
    } else {
      for (const auto& [key, value] : p.items()) {
        if (key != "rope_type") throw makeError("{}: rope_parameters field '{}' is not supported", source, key);
      }
    }
  }

  // Fields that must hold the one value this model builds.
  if (j.value("hidden_act", std::string("silu")) != "silu")
    throw makeError("{}: hidden_act '{}' is not supported (silu)", source, j["hidden_act"].get<std::string>());
  if (j.value("mlp_bias", false)) throw makeError("{}: mlp_bias = true is not supported", source);
  if (j.value("use_sliding_window", false)) throw makeError("{}: use_sliding_window = true is not supported (full attention only)", source);
  // Mistral's attention is windowed whenever sliding_window is set (Qwen2's only with use_sliding_window):
  // a window shorter than the context would make this full-attention model another model.
  if (c.modelType == "mistral" && j.contains("sliding_window") && !j["sliding_window"].is_null() &&
      (!j["sliding_window"].is_number_integer() || j["sliding_window"].get<std::int64_t>() < c.maxPositions)) {
    throw makeError("{}: sliding_window = {} is not supported for mistral (full attention only: null, or at least max_position_embeddings)", source,
                    j["sliding_window"].dump());
  }
  if (j.value("attention_dropout", 0.0) != 0.0) throw makeError("{}: attention_dropout must be 0", source);
  if (j.contains("layer_types")) {
    for (const auto& t : j["layer_types"]) {
      if (t != "full_attention") throw makeError("{}: layer_types entry {} is not supported (full_attention only)", source, t.dump());
    }
  }

  if (!c.explicitHeadDim && c.hiddenSize % c.numHeads != 0) {
    throw makeError("{}: hidden_size {} is not divisible by num_attention_heads {} (and there is no head_dim)", source, c.hiddenSize, c.numHeads);
  }
  if (c.numHeads % c.numKvHeads != 0) {
    throw makeError("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", source, c.numHeads, c.numKvHeads);
  }
  if (c.headDim() % 2 != 0) throw makeError("{}: head dimension {} must be even for RoPE", source, c.headDim());
  if (!(c.rmsNormEps > 0) || !(c.ropeTheta > 0)) throw makeError("{}: rms_norm_eps and rope_theta must be positive", source);
  return c;
}

ModelConfig ModelConfig::load(const std::filesystem::path& path) { return fromJson(readJsonFile(path), path.string()); }

nlohmann::json ModelConfig::toJson() const {
  const char* architecture = modelType == "qwen2"     ? "Qwen2ForCausalLM"
                             : modelType == "qwen3"   ? "Qwen3ForCausalLM"
                             : modelType == "mistral" ? "MistralForCausalLM"
                                                      : "LlamaForCausalLM";
  nlohmann::json j = {{"architectures", {architecture}},
                      {"model_type", modelType},
                      {"vocab_size", vocabSize},
                      {"hidden_size", hiddenSize},
                      {"intermediate_size", intermediateSize},
                      {"num_hidden_layers", numLayers},
                      {"num_attention_heads", numHeads},
                      {"num_key_value_heads", numKvHeads},
                      {"max_position_embeddings", maxPositions},
                      {"rms_norm_eps", rmsNormEps},
                      {"rope_theta", ropeTheta},
                      {"rope_scaling", ropeScalingToJson(ropeScaling)},
                      {"tie_word_embeddings", tieWordEmbeddings},
                      {"attention_bias", attentionBias},
                      {"hidden_act", "silu"},
                      {"torch_dtype", "float32"}};
  if (explicitHeadDim) j["head_dim"] = *explicitHeadDim;
  return j;
}

}  // namespace cuset
