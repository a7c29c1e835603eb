#pragma once
// `cuset train --config FILE`: everything a training run needs, read from YAML and validated (every
// error names the file, field and line).
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cuset/trainer/lora.hpp"
#include "cuset/trainer/model_config.hpp"

#include "cuset/trainer/objective_config.hpp"

namespace cuset {

struct TrainConfig {
  std::uint64_t seed = 1;
  // model: `path` (an HF folder: config.json, model.safetensors, tokenizer.json) or `config` (random init)
  std::filesystem::path modelPath;
  std::optional<nlohmann::json> modelConfig;  // HF config.json fields; vocab_size defaults to the tokenizer's
  // tokenizer: `path`, else the model folder's tokenizer.json, else learned from the data
  std::filesystem::path tokenizerPath;
  // tokenizer.chat_template: a Jinja file used instead of the folder's template (a training-specific
  // one); the folder's special tokens stay. Saved into checkpoints as chat_template.jinja.
  std::filesystem::path chatTemplatePath;
  std::size_t trainVocabSize = 0;
  // data
  std::filesystem::path trainData;
  std::size_t maxTokens = 512;
  // optimisation
  double lr = 3e-4;
  double weightDecay = 0.01;
  std::array<double, 2> betas{0.9, 0.95};
  std::int64_t warmupSteps = 0;
  double minLrRatio = 0.1;
  double gradClip = 1.0;
  // `optimizer.shard_state: true` (ZeRO-1): with data-parallel ranks, each keeps the AdamW state of its
  // share of the parameters, updates that share and broadcasts it; the same results as replicated state.
  bool shardOptimizerState = false;
  std::int64_t batchSize = 8;
  std::int64_t accumulation = 1;
  std::int64_t maxSteps = 100;
  std::int64_t logEvery = 10;
  std::int64_t saveEvery = 100;
  ObjectiveConfig objective;
  int threads = 0;                 // 0: LibTorch's default
  std::string device = "auto";     // cpu, cuda, or auto (cuda when LibTorch has CUDA and a GPU is visible)
  std::string precision = "fp32";  // fp32, or bf16: autocast to bfloat16 with float32 master weights
  // `checkpointing: true`: each decoder layer recomputes its activations in the backward pass.
  bool activationCheckpointing = false;
  // `adapter: {type: lora, ...}`: train LoRA adapters on a frozen model.path instead of every weight.
  std::optional<LoraConfig> adapter;
  std::filesystem::path source;  // the YAML file, for messages

  static TrainConfig load(const std::filesystem::path& path);
  // Same, from YAML text: `source` names it in messages, relative paths resolve against `base`.
  static TrainConfig parse(std::string_view text, const std::string& source, const std::filesystem::path& base);
  // Learning rate at `step`: linear warm-up, then cosine decay to lr * minLrRatio at maxSteps.
  double learningRate(std::int64_t step) const;
};

}  // namespace cuset
