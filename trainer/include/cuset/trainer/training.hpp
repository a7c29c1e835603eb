#pragma once
// `cuset train`: the training loop behind a LibTorch-free interface.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "cuset/trainer/distributed_env.hpp"
#include "cuset/trainer/train_config.hpp"

namespace cuset {

struct TrainRunOptions {
  std::filesystem::path outDir;
  std::optional<std::int64_t> maxSteps;  // overrides steps.max
  bool resume = false;                   // continue from outDir's latest checkpoint
  bool showProgress = true;
  // Data-parallel rank (docs/scale-out.md). batch.size is the global batch: each of the world's ranks
  // trains on its own slice of every micro-batch, and the run equals the single-process one.
  DistributedEnv distributed;
};

struct TrainRunSummary {
  std::int64_t startStep = 0;  // 0, or the checkpoint resumed from
  std::int64_t endStep = 0;
  double firstLoss = 0.0;  // of this invocation's first logged step
  double lastLoss = 0.0;
  std::filesystem::path finalCheckpoint;  // an HF-loadable folder (config.json, model.safetensors, tokenizer.json)
};

// Writes OUT/metrics.jsonl ({"step", "loss", "lr", "tokens_per_s"} per logging step), checkpoints to
// OUT/checkpoints/step-N/ (weights, optimizer state, trainer state; written to a temporary folder and
// renamed, so an interruption never leaves a corrupt one) and OUT/final/.
TrainRunSummary runTraining(const TrainConfig& config, const TrainRunOptions& options);

}  // namespace cuset
