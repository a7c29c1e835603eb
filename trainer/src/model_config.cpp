#include "cuset/trainer/model_config.hpp"

#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"

namespace cuset {

std::int64_t ModelConfig::parameterCount() const {
  const std::int64_t kv = numKvHeads * headDim();
  std::int64_t layer = 2 * hiddenSize * hiddenSize + 2 * hiddenSize * kv + 3 * hiddenSize * intermediateSize + 2 * hiddenSize;
  if (attentionBias) layer += hiddenSize + 2 * kv;
  return vocabSize * hiddenSize * (tieWordEmbeddings ? 1 : 2) + numLayers * layer + hiddenSize;
}

ModelConfig ModelConfig::fromJson(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw makeError("{}: config.json must be a JSON object", source);
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
  if (c.modelType != "llama" && c.modelType != "qwen2" && c.modelType != "mistral") {
    throw makeError("{}: model_type '{}' is not supported (llama, qwen2, mistral)", source, c.modelType);
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
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) throw makeError("{}: rope_scaling is not supported yet", source);
  if (c.hiddenSize % c.numHeads != 0) throw makeError("{}: hidden_size {} is not divisible by num_attention_heads {}", source, c.hiddenSize, c.numHeads);
  if (c.numHeads % c.numKvHeads != 0) {
    throw makeError("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", source, c.numHeads, c.numKvHeads);
  }
  if (c.headDim() % 2 != 0) throw makeError("{}: head dimension {} must be even for RoPE", source, c.headDim());
  if (!(c.rmsNormEps > 0) || !(c.ropeTheta > 0)) throw makeError("{}: rms_norm_eps and rope_theta must be positive", source);
  return c;
}

ModelConfig ModelConfig::load(const std::filesystem::path& path) { return fromJson(readJsonFile(path), path.string()); }

nlohmann::json ModelConfig::toJson() const {
  const char* architecture = modelType == "qwen2" ? "Qwen2ForCausalLM" : modelType == "mistral" ? "MistralForCausalLM" : "LlamaForCausalLM";
  return {{"architectures", {architecture}},
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
          {"tie_word_embeddings", tieWordEmbeddings},
          {"attention_bias", attentionBias},
          {"hidden_act", "silu"},
          {"torch_dtype", "float32"}};
}

}  // namespace cuset
