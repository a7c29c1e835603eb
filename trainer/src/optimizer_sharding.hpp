#pragma once
// ZeRO-1 optimizer-state sharding, all of it (`optimizer.shard_state: true` with several data-parallel
// ranks): which rank keeps the AdamW state of each trainable parameter, the optimizer over a rank's
// share, the updated parameters shared after each step, and the state files a checkpoint holds (one
// per rank, with optimizer_shards.json saying how many). Without sharding, `owners` is empty and every
// function here is the replicated case. Private to cuset_trainer_torch.
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/train_config.hpp"
#include "data_parallel.hpp"

namespace cuset::detail {

// Which rank keeps the optimizer state of each trainable parameter (in model->parameters() order):
// largest first to the least loaded rank, the same on every rank. Empty: every rank keeps all of it.
std::vector<int> optimizerStateOwners(const TrainConfig& config, const std::vector<torch::Tensor>& trainable, const DistributedEnv& dist);

// AdamW over the trainable parameters this rank keeps state for (all, when `owners` is empty), with no
// weight decay on norms and biases.
torch::optim::AdamW buildOptimizer(const TrainConfig& config, CausalLm& model, const std::vector<int>& owners, int rank);

// After the optimizer step: each parameter from the rank that updated it into every other rank's, one
// flattened broadcast per owner and dtype. Nothing without sharding.
void shareUpdatedParameters(DataParallel& dp, const std::vector<torch::Tensor>& parameters, const std::vector<int>& owners, const std::string& what);

// The optimizer state file of this rank in a checkpoint: optimizer.pt, or optimizer-rank-R.pt when sharded.
std::filesystem::path optimizerStateFile(const std::filesystem::path& checkpoint, bool sharded, int rank);

// A checkpoint's state resumes only as it was saved: sharded over as many ranks, or whole.
void requireSameStateLayout(const std::filesystem::path& checkpoint, bool sharded, const DistributedEnv& dist);

// Sharded: every rank writes its share beside checkpoint `name` and waits for the others; returns the
// files (one per rank) for the leader to move in. Not sharded: nothing, and the leader saves the whole state.
std::vector<std::filesystem::path> writeOptimizerShards(torch::optim::Optimizer& optimizer, DataParallel& dp, const std::vector<int>& owners,
                                                        const std::filesystem::path& checkpointsDir, const std::string& name, std::int64_t step);

// Into the checkpoint being written (`dir`): the shards' files, or the whole state when there are none.
void saveOptimizerState(torch::optim::Optimizer& optimizer, const std::vector<std::filesystem::path>& shards, const std::filesystem::path& dir);

}  // namespace cuset::detail
