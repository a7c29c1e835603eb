#pragma once
// The architecture of a Llama/Qwen2-family decoder, read from a Hugging Face config.json.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace cuset {

struct ModelConfig {
  std::string modelType = "llama";  // "llama", "qwen2", "mistral"
  std::int64_t vocabSize = 0;
  std::int64_t hiddenSize = 0;          // C
  std::int64_t intermediateSize = 0;    // MLP width
  std::int64_t numLayers = 0;
  std::int64_t numHeads = 0;            // H
  std::int64_t numKvHeads = 0;          // Hkv, divides H (grouped-query attention)
  std::int64_t maxPositions = 2048;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  bool tieWordEmbeddings = false;
  bool attentionBias = false;           // q/k/v biases (Qwen2: true)

  std::int64_t headDim() const { return hiddenSize / numHeads; }  // D
  std::int64_t parameterCount() const;  // weights, as HF counts them (tied embeddings once)

  // Throws cuset::Error naming `source` and the field for anything missing, inconsistent or absurd.
  static ModelConfig fromJson(const nlohmann::json& j, const std::string& source);
  static ModelConfig load(const std::filesystem::path& path);
  nlohmann::json toJson() const;  // HF-compatible config.json
};

}  // namespace cuset
