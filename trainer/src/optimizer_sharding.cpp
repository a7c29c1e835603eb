#include "optimizer_sharding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"

namespace fs = std::filesystem;

namespace cuset::detail {

std::vector<int> optimizerStateOwners(const TrainConfig& config, const std::vector<torch::Tensor>& trainable, const DistributedEnv& dist) {
  if (!config.shardOptimizerState || !dist.active()) return {};
  if (trainable.size() < static_cast<std::size_t>(dist.worldSize)) {
    throw makeError("{}: optimizer.shard_state over {} ranks needs at least as many trainable tensors, the model has {}", config.source.string(),
                    dist.worldSize, trainable.size());
  }
  std::vector<std::size_t> order(trainable.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return trainable[a].numel() > trainable[b].numel(); });
  std::vector<std::int64_t> load(static_cast<std::size_t>(dist.worldSize), 0);
  std::vector<int> owners(trainable.size(), 0);
  for (const std::size_t i : order) {
    const auto lightest = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    owners[i] = lightest;
    load[static_cast<std::size_t>(lightest)] += trainable[i].numel();
  }
  return owners;
}

torch::optim::AdamW buildOptimizer(const TrainConfig& config, CausalLm& model, const std::vector<int>& owners, int rank) {
  std::vector<torch::Tensor> decay, noDecay;
  std::size_t index = 0;
  for (auto& p : model->named_parameters()) {
    if (!p.value().requires_grad()) continue;                  // frozen under adapters
    if (!owners.empty() && owners[index++] != rank) continue;  // another rank keeps its state
    (p.key().find("norm") != std::string::npos || p.key().ends_with(".bias") ? noDecay : decay).push_back(p.value());
  }
  auto options = torch::optim::AdamWOptions(config.lr).betas({config.betas[0], config.betas[1]}).weight_decay(config.weightDecay);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options));
  groups.emplace_back(noDecay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options).weight_decay(0.0)));
  return torch::optim::AdamW(std::move(groups));
}

void shareUpdatedParameters(DataParallel& dp, const std::vector<torch::Tensor>& parameters, const std::vector<int>& owners, const std::string& what) {
  if (owners.empty() || !dp.active()) return;
  TORCH_CHECK(parameters.size() == owners.size(), "shareUpdatedParameters: one owner per parameter");
  torch::NoGradGuard noGrad;
  for (int root = 0; root < dp.env().worldSize; ++root) {
    // Tensors of one dtype per flat buffer (a bfloat16 base beside float32 adapters).
    std::map<at::ScalarType, std::vector<at::Tensor>> byType;
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      if (owners[i] == root) byType[parameters[i].scalar_type()].push_back(parameters[i]);
    }
    for (auto& [type, group] : byType) {
      std::vector<at::Tensor> pieces;
      for (const auto& t : group) pieces.push_back(t.reshape({-1}));
      const at::Tensor flat = torch::cat(pieces);
      dp.broadcast({flat}, what, root);
      if (dp.env().rank == root) continue;
      std::int64_t offset = 0;
      for (auto& t : group) {
        t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
        offset += t.numel();
      }
    }
  }
}

fs::path optimizerStateFile(const fs::path& checkpoint, bool sharded, int rank) {
  return checkpoint / (sharded ? fmt::format("optimizer-rank-{}.pt", rank) : std::string("optimizer.pt"));
}

void requireSameStateLayout(const fs::path& checkpoint, bool sharded, const DistributedEnv& dist) {
  // Sharded state resumes on as many ranks, each with its own file; replicated state anywhere.
  const fs::path shards = checkpoint / "optimizer_shards.json";
  const std::int64_t savedRanks = fs::exists(shards) ? jsonInteger(readJsonFile(shards).at("ranks"), shards.string() + ": ranks", 1) : 0;
  if (sharded != (savedRanks > 0) || (sharded && savedRanks != dist.worldSize)) {
    throw makeError("{}: the optimizer state was saved {} and this run {}; resume with the same optimizer.shard_state and number of ranks",
                    checkpoint.string(), savedRanks > 0 ? fmt::format("sharded over {} ranks", savedRanks) : "whole (not sharded)",
                    sharded ? fmt::format("shards it over {} ranks", dist.worldSize) : "keeps it whole");
  }
}

std::vector<fs::path> writeOptimizerShards(torch::optim::Optimizer& optimizer, DataParallel& dp, const std::vector<int>& owners,
                                           const fs::path& checkpointsDir, const std::string& name, std::int64_t step) {
  std::vector<fs::path> shards;
  if (owners.empty()) return shards;
  // Every rank writes its share of the optimizer state beside the checkpoint; once all have (the sum
  // below returns only then), rank 0 moves them into it before it is renamed into place.
  const DistributedEnv& dist = dp.env();
  for (int r = 0; r < dist.worldSize; ++r) shards.push_back(checkpointsDir / fmt::format(".{}.optimizer-rank-{}.pt", name, r));
  torch::save(optimizer, shards[static_cast<std::size_t>(dist.rank)].string());
  dp.sum({1.0}, fmt::format("waiting for every rank's optimizer state at step {}", step));
  return shards;
}

void saveOptimizerState(torch::optim::Optimizer& optimizer, const std::vector<fs::path>& shards, const fs::path& dir) {
  if (shards.empty()) {
    torch::save(optimizer, (dir / "optimizer.pt").string());
    return;
  }
  for (std::size_t r = 0; r < shards.size(); ++r) fs::rename(shards[r], optimizerStateFile(dir, true, static_cast<int>(r)));
  writeJsonFileAtomic(dir / "optimizer_shards.json", {{"ranks", shards.size()}});
}

}  // namespace cuset::detail
