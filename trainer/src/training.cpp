// The training loop. Per-token losses go to computeObjective (objectives.cpp), which masks tokens and
// weights samples for CuSeT and the baselines; sft is the plain mean over response tokens.
#include "cuset/trainer/allocator_tuning.hpp"
#include "cuset/trainer/training.hpp"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <thread>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/lora_adapter.hpp"
#include "cuset/trainer/objectives.hpp"
#include "cuset/trainer/sensitivity_lexer.hpp"
#include "cuset/trainer/tokenizer.hpp"
#include "data_parallel.hpp"
#include "optimizer_sharding.hpp"
#include "training_setup.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// Mixed precision: while alive, eligible ops (matmuls, linears) run in bfloat16 on `device` while the
// parameters, their gradients and the optimizer state stay float32.
class Bf16Autocast {
 public:
  Bf16Autocast(bool enabled, torch::Device device) : enabled_(enabled), cuda_(device.is_cuda()) {
    if (!enabled_) return;
    if (cuda_) {
      at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
      at::autocast::set_autocast_enabled(at::kCUDA, true);
    } else {
      at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
      at::autocast::set_autocast_enabled(at::kCPU, true);
    }
  }
  ~Bf16Autocast() {
    if (!enabled_) return;
    if (cuda_)
      at::autocast::set_autocast_enabled(at::kCUDA, false);
    else
      at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
  }
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  bool enabled_;
  bool cuda_;
};

// Per-token cross-entropy, (B, T), from (B, T, V) logits.
torch::Tensor tokenLosses(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}),
                                              torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
      .view_as(targets.to(torch::kFloat32));
}

// The objective's per-micro-batch statistics, averaged over a logging window (metrics.jsonl).
struct ObjectiveWindow {
  double masked = 0.0, sensitive = 0.0, regions = 0.0;
  double weightMin = 1e300, weightMax = -1e300;
  int count = 0;
  void add(const ObjectiveStats& s) {
    masked += s.maskedFraction;
    sensitive += s.sensitiveShare;
    regions += static_cast<double>(s.regions);
    weightMin = std::min(weightMin, s.weightMin);
    weightMax = std::max(weightMax, s.weightMax);
    ++count;
  }
  void writeTo(nlohmann::json& record) const {
    if (count == 0) return;
    record["masked_fraction"] = masked / count;
    record["sensitive_share"] = sensitive / count;
    record["regions_per_batch"] = regions / count;
    record["weight_min"] = weightMin;
    record["weight_max"] = weightMax;
  }
};

struct Batch {
  torch::Tensor inputs;     // (B, T) int64
  torch::Tensor targets;    // (B, T) int64, inputs shifted left by one
  torch::Tensor mask;       // (B, T) float32: 1 where the target token is in the loss
  torch::Tensor sensitive;  // (B, T) float32: 1 where the target token is CUDA-sensitive
  std::int64_t tokens = 0;
};

// A fixed order of micro-batches for every epoch, derived from the seed alone, so a resumed run sees
// exactly the batches the uninterrupted run would: shuffle, sort chunks by length (bucketing, less
// padding), shuffle the batches.
class BatchPlan {
 public:
  BatchPlan(const std::vector<TokenizedExample>& data, std::int64_t batchSize, std::uint64_t seed)
      : data_(data), batchSize_(batchSize), seed_(seed) {}

  // Rank `rank`'s share of global micro-batch `index`: its rows rank, rank + ranks, rank + 2 ranks, ...
  // (the whole batch for one rank), padded to the longest of them. A batch's rows are in length
  // order, so striding gives every rank short and long rows alike, where contiguous slices would give
  // the last rank all the longest ones and the others would wait for it at every all-reduce.
  Batch batch(std::int64_t index, std::int32_t padId, std::int64_t rank = 0, std::int64_t ranks = 1) {
    const std::int64_t perEpoch = std::max<std::int64_t>(1, static_cast<std::int64_t>(data_.size()) / batchSize_);
    const std::int64_t epoch = index / perEpoch;
    if (epoch != cachedEpoch_) buildEpoch(epoch);
    const auto& all = batches_[static_cast<std::size_t>(index % perEpoch)];
    const std::int64_t rows = batchSize_ / ranks;
    std::vector<std::size_t> members;
    for (std::int64_t r = rank; r < batchSize_ && r < static_cast<std::int64_t>(all.size()); r += ranks)
      members.push_back(all[static_cast<std::size_t>(r)]);
    std::size_t longest = 2;
    for (auto m : members) longest = std::max(longest, data_[m].ids.size());
    const auto T = static_cast<std::int64_t>(longest) - 1;
    Batch b;
    b.inputs = torch::full({rows, T}, padId, torch::kInt64);
    b.targets = torch::zeros({rows, T}, torch::kInt64);
    b.mask = torch::zeros({rows, T}, torch::kFloat32);
    b.sensitive = torch::zeros({rows, T}, torch::kFloat32);
    auto in = b.inputs.accessor<std::int64_t, 2>();
    auto out = b.targets.accessor<std::int64_t, 2>();
    auto mk = b.mask.accessor<float, 2>();
    auto sn = b.sensitive.accessor<float, 2>();
    for (std::size_t r = 0; r < members.size(); ++r) {
      const auto& ex = data_[members[r]];
      for (std::size_t t = 0; t + 1 < ex.ids.size(); ++t) {
        in[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = ex.ids[t];
        out[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = ex.ids[t + 1];
        mk[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = ex.lossMask[t + 1];
        if (!ex.sensitive.empty()) sn[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = ex.sensitive[t + 1];
        b.tokens += 1;
      }
    }
    return b;
  }

 private:
  void buildEpoch(std::int64_t epoch) {
    std::vector<std::size_t> order(data_.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed_ * 1000003u + static_cast<std::uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), rng);
    const std::size_t chunk = static_cast<std::size_t>(batchSize_) * 8;
    for (std::size_t c = 0; c < order.size(); c += chunk) {
      const auto end = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), c + chunk));
      std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(c), end,
                       [&](auto a, auto b) { return data_[a].ids.size() < data_[b].ids.size(); });
    }
    batches_.clear();
    for (std::size_t i = 0; i + static_cast<std::size_t>(batchSize_) <= order.size(); i += static_cast<std::size_t>(batchSize_)) {
      batches_.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(i) + batchSize_);
    }
    if (batches_.empty()) batches_.emplace_back(order.begin(), order.end());
    std::shuffle(batches_.begin(), batches_.end(), rng);
    cachedEpoch_ = epoch;
  }

  const std::vector<TokenizedExample>& data_;
  std::int64_t batchSize_;
  std::uint64_t seed_;
  std::int64_t cachedEpoch_ = -1;
  std::vector<std::vector<std::size_t>> batches_;
};

// The trained model as a folder: a full HF checkpoint, or with adapters a PEFT adapter folder on model.path.
void saveModel(CausalLm& model, const TrainConfig& config, const fs::path& dir) {
  if (config.adapter)
    saveAdapter(model, *config.adapter, fs::absolute(config.modelPath), dir);
  else
    saveCheckpoint(model, dir);
}

// Written beside the last checkpoint and renamed into place only when whole, so a failure (a full
// disk) leaves every earlier checkpoint and `latest` as they were, and says which file it was.
// `shards`: with sharded optimizer state, the ranks' state files (already written, moved in here);
// empty: this process's optimizer is the whole state.
void saveTrainingCheckpoint(const fs::path& outDir, const std::string& name, CausalLm& model, torch::optim::Optimizer& optimizer,
                            const detail::TrainingText& text, std::int64_t step, const TrainConfig& config, const std::vector<fs::path>& shards) {
  const fs::path dir = outDir / "checkpoints" / name;
  const fs::path tmp = outDir / "checkpoints" / (name + ".tmp");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    saveModel(model, config, tmp);
    text.save(tmp);
    detail::saveOptimizerState(optimizer, shards, tmp);
    writeJsonFileAtomic(tmp / "trainer_state.json", {{"step", step}, {"seed", config.seed}, {"config", config.source.string()}});
  } catch (const c10::Error& e) {
    fs::remove_all(tmp, ec);
    throw makeError("{}: cannot write the checkpoint (is the disk full?): {}", tmp.string(), e.what_without_backtrace());
  } catch (const std::exception& e) {
    fs::remove_all(tmp, ec);
    throw makeError("cannot write the checkpoint {} (is the disk full?): {}", tmp.string(), e.what());
  }
  fs::remove_all(dir);
  fs::rename(tmp, dir);
  writeFileAtomic(outDir / "checkpoints" / "latest", name);
}

// The global micro-batch's detached per-token statistics, the ranks' rows stacked in rank order: what
// planObjective needs to decide masks and weights exactly as one process holding the whole batch would.
ObjectiveBatch gatherObjectiveBatch(DataParallel& dp, const ObjectiveBatch& local, std::int64_t step) {
  const auto b = local.losses.size(0);
  const torch::Tensor reference = local.referenceLosses.defined() ? local.referenceLosses.detach() : torch::zeros_like(local.losses.detach());
  const torch::Tensor packed = torch::cat({local.losses.detach(), local.mask, local.sensitive, reference}, 0);  // (4b, T)
  const torch::Tensor all = dp.gatherRows(packed, fmt::format("gathering the token statistics of step {}", step + 1));
  std::vector<torch::Tensor> parts[4];
  for (int r = 0; r < dp.env().worldSize; ++r) {
    for (int k = 0; k < 4; ++k) parts[k].push_back(all.narrow(0, (4 * r + k) * b, b));
  }
  ObjectiveBatch global{torch::cat(parts[0], 0), torch::cat(parts[1], 0), torch::cat(parts[2], 0), torch::Tensor(), step};
  if (local.referenceLosses.defined()) global.referenceLosses = torch::cat(parts[3], 0);
  return global;
}

// What the optimizer updates and the ranks all-reduce: every parameter, or the adapters alone.
std::vector<torch::Tensor> trainableParameters(CausalLm& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

// A number that differs between ranks as soon as one parameter differs in any bit that matters to a sum.
double parameterChecksum(CausalLm& model) {
  torch::NoGradGuard noGrad;
  double sum = 0.0;
  std::int64_t i = 0;
  for (const auto& p : model->parameters()) sum += static_cast<double>(++i) * p.to(torch::kFloat64).sum().item<double>();
  return sum;
}

// metrics.jsonl, appended by rank 0 only; the other ranks' writer does nothing.
class MetricsLog {
 public:
  MetricsLog(fs::path path, bool leader) : path_(std::move(path)) {
    if (leader) out_.open(path_, std::ios::app);
  }
  void append(const nlohmann::json& record) {
    if (!out_.is_open()) return;
    out_ << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
    if (!out_) throw makeError("{}: cannot append a metrics record (is the disk full?)", path_.string());
  }

 private:
  fs::path path_;
  std::ofstream out_;
};

// What one optimizer step did: its loss and tokens summed over ranks, and time spent in the all-reduce.
struct StepResult {
  double loss = 0.0;
  std::int64_t tokens = 0;
  double lr = 0.0;
  double allReduceSeconds = 0.0;
  double rankWaitSeconds = 0.0;
};

// The steps since the last metrics record, averaged into the next one.
struct MetricsWindow {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::int64_t tokens = 0;
  double loss = 0.0, allReduce = 0.0, rankWait = 0.0;
  int steps = 0;
  ObjectiveWindow objective;

  void add(const StepResult& step) {
    tokens += step.tokens;
    loss += step.loss;
    allReduce += step.allReduceSeconds;
    rankWait += step.rankWaitSeconds;
    ++steps;
  }
  double meanLoss() const { return loss / steps; }
  nlohmann::json record(std::int64_t step, double lr, const TrainConfig& config, const DistributedEnv& dist) const {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json r = {{"step", step},
                        {"loss", meanLoss()},
                        {"lr", lr},
                        {"tokens_per_s", seconds > 0 ? tokens / seconds : 0.0},
                        {"step_s", seconds / steps},
                        {"objective", objectiveName(config.objective.kind)}};
    objective.writeTo(r);
    if (dist.active()) {
      r["ranks"] = dist.worldSize;
      r["allreduce_s_per_step"] = allReduce / steps;
      r["rank_wait_s_per_step"] = rankWait / steps;
    }
    return r;
  }
};

// What every step touches.
struct Trainee {
  CausalLm& model;
  std::optional<CausalLm>& reference;
  torch::optim::AdamW& optimizer;
  DataParallel& dp;
  BatchPlan& plan;
  torch::Device device;
  std::int32_t padId;
  std::int64_t firstRow;                  // this rank's rows are block `rank` of the gathered batch (gatherRows stacks by rank)
  std::vector<torch::Tensor> parameters;  // the trainable ones
  std::vector<int> owners;                // sharded optimizer state: the rank updating each parameter; empty: every rank all
};

// Forward, objective and backward of one micro-batch; returns its share of the step's loss.
double microBatchBackward(const TrainConfig& config, Trainee& t, Batch& b, std::int64_t step, ObjectiveWindow& stats) {
  b.inputs = b.inputs.to(t.device);
  b.targets = b.targets.to(t.device);
  b.mask = b.mask.to(t.device);
  torch::Tensor logits;
  {
    const Bf16Autocast autocast(config.precision == "bf16", t.device);
    logits = t.model->forward(b.inputs).to(torch::kFloat32);  // (B, T, V); the loss in float32
  }
  const auto losses = tokenLosses(logits, b.targets);  // (B, T)
  ObjectiveBatch ob{.losses = losses, .mask = b.mask, .sensitive = b.sensitive.to(t.device), .referenceLosses = torch::Tensor(), .step = step};
  if (t.reference) {
    c10::InferenceMode inference;  // cheaper than NoGradGuard: no version counters, no views tracking
    const Bf16Autocast autocast(config.precision == "bf16", t.device);
    ob.referenceLosses = tokenLosses((*t.reference)->forward(b.inputs).to(torch::kFloat32), b.targets);
  } else if (config.adapter && config.objective.needsReference()) {
    // The frozen base is the reference: the same model with its adapters off, no second copy.
    c10::InferenceMode inference;
    const Bf16Autocast autocast(config.precision == "bf16", t.device);
    const AdaptersDisabled base(t.model);
    ob.referenceLosses = tokenLosses(t.model->forward(b.inputs).to(torch::kFloat32), b.targets);
  }
  // With several ranks the plan is made on the whole global micro-batch, so this rank's loss is its
  // share of the single-process loss, and summing the ranks' gradients gives that loss's gradient.
  const ObjectivePlan objectivePlan = planObjective(config.objective, t.dp.active() ? gatherObjectiveBatch(t.dp, ob, step) : ob);
  const auto loss = objectiveLoss(config.objective, losses, objectivePlan, t.firstRow) / static_cast<double>(config.accumulation);
  stats.add(objectivePlan.stats);
  loss.backward();
  return loss.item<double>();
}

StepResult trainStep(const TrainConfig& config, Trainee& t, std::int64_t step, ObjectiveWindow& stats) {
  StepResult result;
  result.lr = config.learningRate(step);
  for (auto& group : t.optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(result.lr);
  // Every trainable gradient, not only the optimizer's: with sharded state it holds this rank's share
  // alone, and the others' gradients would accumulate across steps.
  for (auto& p : t.parameters) {
    if (p.grad().defined()) p.mutable_grad().zero_();
  }
  const DistributedEnv& dist = t.dp.env();
  for (std::int64_t a = 0; a < config.accumulation; ++a) {
    Batch b = t.plan.batch(step * config.accumulation + a, t.padId, dist.rank, dist.worldSize);
    result.loss += microBatchBackward(config, t, b, step, stats);
    result.tokens += b.tokens;
  }
  t.dp.sumGradients(t.parameters, fmt::format("the gradient all-reduce of step {}", step + 1));
  result.allReduceSeconds = t.dp.takeGradientSeconds();
  result.rankWaitSeconds = t.dp.takeWaitSeconds();
  if (t.dp.active()) {
    const auto totals = t.dp.sum({result.loss, static_cast<double>(result.tokens)}, fmt::format("summing the loss of step {}", step + 1));
    result.loss = totals[0];
    result.tokens = static_cast<std::int64_t>(totals[1]);
  }
  // Every rank holds every summed gradient, so the norm is the global one even when state is sharded.
  if (config.gradClip > 0) torch::nn::utils::clip_grad_norm_(t.parameters, config.gradClip);
  t.optimizer.step();
  // Sharded state: each rank updated its share; the owners' new values go to everyone.
  detail::shareUpdatedParameters(t.dp, t.parameters, t.owners, fmt::format("sharing the parameters updated at step {}", step + 1));
  return result;
}

// Rank 0's checkpoint stands for every rank only if they all hold the same weights.
void saveAgreedCheckpoint(const TrainConfig& config, const TrainRunOptions& options, Trainee& t, const detail::TrainingText& text,
                          std::int64_t done) {
  const DistributedEnv& dist = t.dp.env();
  if (const auto [low, high] =
          t.dp.minMax([&] { return parameterChecksum(t.model); }, fmt::format("comparing the ranks' parameters at step {}", done));
      low != high) {
    throw makeError(
        "data-parallel training ({}): the ranks' parameters differ at step {} (checksums {:.17g} and {:.17g}); their "
        "gradients or optimizer states diverged, so no checkpoint is written",
        dist.describe(), done, low, high);
  }
  const std::string name = fmt::format("step-{}", done);
  const std::vector<fs::path> shards = detail::writeOptimizerShards(t.optimizer, t.dp, t.owners, options.outDir / "checkpoints", name, done);
  if (dist.leader()) saveTrainingCheckpoint(options.outDir, name, t.model, t.optimizer, text, done, config, shards);
}

// Steps `step` up to `maxSteps`: metrics every log_every steps, checkpoints every save_every, both at the end.
TrainRunSummary trainSteps(const TrainConfig& config, const TrainRunOptions& options, Trainee& t, const detail::TrainingText& text, std::int64_t step,
                           std::int64_t maxSteps) {
  const bool leader = options.distributed.leader();
  TrainRunSummary summary;
  summary.startStep = step;
  MetricsLog metrics(options.outDir / "metrics.jsonl", leader);
  ProgressBar progress("train", static_cast<std::size_t>(std::max<std::int64_t>(0, maxSteps - step)), "step", options.showProgress && leader);
  MetricsWindow window;
  bool first = true;
  for (; step < maxSteps; ++step) {
    const StepResult result = trainStep(config, t, step, window.objective);
    window.add(result);
    progress.setSuffix(fmt::format("loss {:.4f} lr {:.2e}", result.loss, result.lr));
    progress.advance();
    const std::int64_t done = step + 1;
    if (done % config.logEvery == 0 || done == maxSteps) {
      metrics.append(window.record(done, result.lr, config, options.distributed));
      if (first) summary.firstLoss = window.meanLoss();
      first = false;
      summary.lastLoss = window.meanLoss();
      window = MetricsWindow();
    }
    if (done % config.saveEvery == 0 || done == maxSteps) saveAgreedCheckpoint(config, options, t, text, done);
  }
  progress.finish();
  summary.endStep = step;
  return summary;
}

// The final model as a plain HF folder (or a PEFT adapter folder), written by rank 0.
fs::path saveFinalModel(CausalLm& model, const TrainConfig& config, const detail::TrainingText& text, const TrainRunOptions& options) {
  const fs::path final = options.outDir / "final";
  if (options.distributed.leader()) {
    fs::remove_all(final);
    saveModel(model, config, final);
    text.save(final);
  }
  return final;
}

void requireEvenBatchSplit(const TrainConfig& config, const DistributedEnv& dist) {
  if (config.batchSize % dist.worldSize != 0) {
    throw makeError("{}: batch.size {} is the global batch, split evenly over the ranks, so it must be a multiple of WORLD_SIZE={}",
                    config.source.string(), config.batchSize, dist.worldSize);
  }
}

// Ranks sharing a node share its cores: "threads: 0" (LibTorch's default, one per core) would
// oversubscribe them, so each rank takes its share.
int computeThreadsOfRank(const TrainConfig& config, const DistributedEnv& dist) {
  if (config.threads == 0 && dist.localWorldSize > 1) return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / dist.localWorldSize);
  return config.threads;
}

}  // namespace

TrainRunSummary runTraining(const TrainConfig& config, const TrainRunOptions& options) {
  keepLargeAllocationsMapped();
  using namespace detail;
  const DistributedEnv& dist = options.distributed;
  requireEvenBatchSplit(config, dist);
  setComputeThreads(computeThreadsOfRank(config, dist));
  const std::int64_t maxSteps = options.maxSteps.value_or(config.maxSteps);
  const ResumePoint resume = findResumePoint(options);
  DataParallel dp(dist);  // the rendezvous: every rank has looked at the run folder before rank 0 writes to it
  agreeOnRunFolder(dp, resume, options);

  const std::vector<ChatExample> examples = readChatJsonl(config.trainData);
  const TrainingText text = loadTrainingText(config, resume, examples);
  const std::vector<TokenizedExample> data = tokenizeTrainingData(config, text, examples);
  torch::manual_seed(config.seed);
  const ModelConfig modelConfig = resolveModelConfig(config, resume, text.tokenizer);
  requireSameInputsOnEveryRank(dp, config, data, modelConfig);
  const torch::Device device = trainingDevice(config, dist);
  requireHostMemory(config, modelConfig, device);
  CausalLm model = buildTrainedModel(config, modelConfig, device, resume, dp);
  std::optional<CausalLm> reference = buildReferenceModel(config, modelConfig, model, device);
  const std::vector<torch::Tensor> trainable = trainableParameters(model);
  const std::vector<int> owners = optimizerStateOwners(config, trainable, dist);
  torch::optim::AdamW optimizer = buildOptimizer(config, model, owners, dist.rank);
  const std::int64_t startStep = restoreTrainingState(optimizer, resume, options, !owners.empty());

  BatchPlan plan(data, config.batchSize, config.seed);
  Trainee trainee{.model = model,
                  .reference = reference,
                  .optimizer = optimizer,
                  .dp = dp,
                  .plan = plan,
                  .device = device,
                  .padId = text.padId,
                  .firstRow = dist.rank * (config.batchSize / dist.worldSize),
                  .parameters = trainable,
                  .owners = owners};
  TrainRunSummary summary = trainSteps(config, options, trainee, text, startStep, maxSteps);
  summary.finalCheckpoint = saveFinalModel(model, config, text, options);
  return summary;
}

}  // namespace cuset
