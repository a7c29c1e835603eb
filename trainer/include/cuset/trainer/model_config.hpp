#pragma once
// The architecture of a Llama/Qwen2/Qwen3-family decoder, read from a Hugging Face config.json.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace cuset {

// `rope_scaling` as Hugging Face defines it (transformers' modeling_rope_utils): how the rotary
// frequencies are stretched past the context the model was pretrained on.
struct RopeScaling {
  enum class Type { none, linear, dynamic, llama3, yarn };
  Type type = Type::none;
  double factor = 1.0;
  // llama3: frequencies with wavelengths between original/high and original/low are interpolated.
  double lowFreqFactor = 1.0, highFreqFactor = 4.0;
  // llama3, yarn, dynamic: the pretraining context (yarn and dynamic default to max_position_embeddings).
  std::optional<std::int64_t> originalMaxPositions;
  // yarn: cos and sin are scaled by attentionFactor (default from mscale/mscale_all_dim, else
  // 0.1 ln(factor) + 1); dimensions rotating faster than betaFast times over the original context keep
  // their frequency, slower than betaSlow are interpolated, a linear ramp between.
  std::optional<double> attentionFactor;
  double betaFast = 32.0, betaSlow = 1.0;
  std::optional<double> mscale, mscaleAllDim;
};

struct ModelConfig {
  std::string modelType = "llama";  // "llama", "qwen2", "qwen3", "mistral"
  std::int64_t vocabSize = 0;
  std::int64_t hiddenSize = 0;        // C
  std::int64_t intermediateSize = 0;  // MLP width
  std::int64_t numLayers = 0;
  std::int64_t numHeads = 0;    // H
  std::int64_t numKvHeads = 0;  // Hkv, divides H (grouped-query attention)
  std::int64_t maxPositions = 2048;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  bool tieWordEmbeddings = false;
  bool attentionBias = false;                   // q/k/v biases (Qwen2: true)
  std::optional<std::int64_t> explicitHeadDim;  // `head_dim` (Qwen3, Llama 3.2), when not C/H
  bool qkNorm = false;                          // per-head RMSNorm of q and k before RoPE (model_type qwen3)
  RopeScaling ropeScaling;

  std::int64_t headDim() const { return explicitHeadDim ? *explicitHeadDim : hiddenSize / numHeads; }  // D
  std::int64_t parameterCount() const;  // weights, as HF counts them (tied embeddings once)

  // Throws cuset::Error naming `source` and the field for anything missing, inconsistent or absurd,
  // and for any field this model does not build (an unknown key, a sliding window, a quantization).
  static ModelConfig fromJson(const nlohmann::json& j, const std::string& source);
  static ModelConfig load(const std::filesystem::path& path);
  nlohmann::json toJson() const;  // HF-compatible config.json
};

}  // namespace cuset
