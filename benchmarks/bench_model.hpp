#pragma once
// The small Qwen2-shaped model the trainer benchmarks time (bench_train, bench_objectives): large enough
// that a step is dominated by the model's matmuls, small enough to run in seconds on two cores.
#include <nlohmann/json.hpp>

#include "cuset/trainer/model_config.hpp"

namespace bench {

constexpr int kVocab = 768, kHidden = 128, kInter = 352, kLayers = 2, kHeads = 4, kKvHeads = 2, kBatch = 4, kSeq = 256;

inline cuset::ModelConfig benchModelConfig() {
  return cuset::ModelConfig::fromJson(nlohmann::json{{"model_type", "qwen2"},
                                                     {"vocab_size", kVocab},
                                                     {"hidden_size", kHidden},
                                                     {"intermediate_size", kInter},
                                                     {"num_hidden_layers", kLayers},
                                                     {"num_attention_heads", kHeads},
                                                     {"num_key_value_heads", kKvHeads},
                                                     {"tie_word_embeddings", true}},
                                      "bench");
}

}  // namespace bench
