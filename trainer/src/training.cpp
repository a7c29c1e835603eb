// The training loop. Per-token losses go to computeObjective (objectives.cpp), which masks tokens and
// weights samples for CuSeT and the baselines; sft is the plain mean over response tokens.
#include "cuset/trainer/training.hpp"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
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
#include "cuset/trainer/objectives.hpp"
#include "cuset/trainer/sensitivity_lexer.hpp"
#include "cuset/trainer/tokenizer.hpp"
#include "data_parallel.hpp"

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
      at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
      at::autocast::set_enabled(true);
    } else {
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::set_cpu_enabled(true);
    }
  }
  ~Bf16Autocast() {
    if (!enabled_) return;
    if (cuda_) at::autocast::set_enabled(false);
    else at::autocast::set_cpu_enabled(false);
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
  torch::Tensor inputs;   // (B, T) int64
  torch::Tensor targets;  // (B, T) int64, inputs shifted left by one
  torch::Tensor mask;     // (B, T) float32: 1 where the target token is in the loss
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
    for (std::int64_t r = rank; r < batchSize_ && r < static_cast<std::int64_t>(all.size()); r += ranks) members.push_back(all[static_cast<std::size_t>(r)]);
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
      std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(c), end, [&](auto a, auto b) { return data_[a].ids.size() < data_[b].ids.size(); });
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

std::optional<fs::path> latestCheckpoint(const fs::path& outDir) {
  const fs::path latest = outDir / "checkpoints" / "latest";
  if (!fs::exists(latest)) return std::nullopt;
  return outDir / "checkpoints" / readFile(latest);
}

// Written beside the last checkpoint and renamed into place only when whole, so a failure (a full
// disk) leaves every earlier checkpoint and `latest` as they were, and says which file it was.
void saveTrainingCheckpoint(const fs::path& outDir, const std::string& name, CausalLm& model, torch::optim::Optimizer& optimizer,
                            const BpeTokenizer& tokenizer, std::int64_t step, const TrainConfig& config) {
  const fs::path dir = outDir / "checkpoints" / name;
  const fs::path tmp = outDir / "checkpoints" / (name + ".tmp");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    saveCheckpoint(model, tmp);
    tokenizer.save(tmp / "tokenizer.json");
    torch::save(optimizer, (tmp / "optimizer.pt").string());
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

// metrics.jsonl without records past `step` (a resumed run redoes them).
void truncateMetrics(const fs::path& path, std::int64_t step) {
  if (!fs::exists(path)) return;
  std::string kept;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      if (jsonInteger(nlohmann::json::parse(line).at("step"), "step") <= step) kept += line + "\n";
    } catch (const std::exception&) {
      break;  // a torn last line
    }
  }
  writeFileAtomic(path, kept);
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

// A number that differs between ranks as soon as one parameter differs in any bit that matters to a sum.
double parameterChecksum(CausalLm& model) {
  torch::NoGradGuard noGrad;
  double sum = 0.0;
  std::int64_t i = 0;
  for (const auto& p : model->parameters()) sum += static_cast<double>(++i) * p.to(torch::kFloat64).sum().item<double>();
  return sum;
}

// What every rank must agree on before training: the tokenized data (ids, loss masks, sensitivity) and
// the model's shape. FNV-1a, so no library is needed for a number that is only compared.
std::uint64_t inputsFingerprint(const std::vector<TokenizedExample>& data, const ModelConfig& model) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(data.size());
  for (const auto& ex : data) {
    mix(ex.ids.size());
    for (std::size_t t = 0; t < ex.ids.size(); ++t) {
      mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(ex.ids[t])) << 2 | (ex.lossMask[t] ? 2u : 0u) |
          (!ex.sensitive.empty() && ex.sensitive[t] ? 1u : 0u));
    }
  }
  mix(static_cast<std::uint64_t>(model.parameterCount()));
  mix(static_cast<std::uint64_t>(model.vocabSize));
  return h;
}

std::int64_t checkpointStep(const fs::path& checkpoint) {
  const fs::path state = checkpoint / "trainer_state.json";
  return jsonInteger(readJsonFile(state).at("step"), state.string() + ": step", 0);
}

}  // namespace

TrainRunSummary runTraining(const TrainConfig& config, const TrainRunOptions& options) {
  const DistributedEnv& dist = options.distributed;
  if (config.batchSize % dist.worldSize != 0) {
    throw makeError("{}: batch.size {} is the global batch, split evenly over the ranks, so it must be a multiple of WORLD_SIZE={}",
                    config.source.string(), config.batchSize, dist.worldSize);
  }
  // Ranks sharing a node share its cores: "threads: 0" (LibTorch's default, one per core) would
  // oversubscribe them, so each rank takes its share.
  int threads = config.threads;
  if (threads == 0 && dist.localWorldSize > 1) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / dist.localWorldSize);
  setComputeThreads(threads);
  const std::int64_t maxSteps = options.maxSteps.value_or(config.maxSteps);
  const auto resumeFrom = options.resume ? latestCheckpoint(options.outDir) : std::nullopt;
  if (!options.resume && fs::exists(options.outDir / "metrics.jsonl")) {
    throw makeError("{} already holds a training run; pass --resume to continue it, or choose another --out", options.outDir.string());
  }
  const std::int64_t resumeStep = resumeFrom ? checkpointStep(*resumeFrom) : 0;
  // Every rank has looked at the run folder before rank 0 may write to it: the rendezvous waits for all.
  DataParallel dp(dist);
  const bool leader = dist.leader();
  if (const auto [low, high] = dp.minMax([&] { return static_cast<double>(resumeStep); }, "comparing the checkpoints the ranks resume from"); low != high) {
    throw makeError("{}: the ranks would resume from different steps ({} and {}): --out must be one folder that every rank reads, on "
                    "storage shared by all nodes",
                    options.outDir.string(), static_cast<std::int64_t>(low), static_cast<std::int64_t>(high));
  }
  if (leader) fs::create_directories(options.outDir / "checkpoints");

  // Data and tokenizer.
  const std::vector<ChatExample> examples = readChatJsonl(config.trainData);
  std::optional<BpeTokenizer> tokenizer;
  if (resumeFrom) {
    tokenizer.emplace(BpeTokenizer::load(*resumeFrom / "tokenizer.json"));
  } else if (!config.tokenizerPath.empty()) {
    tokenizer.emplace(BpeTokenizer::load(config.tokenizerPath));
  } else if (!config.modelPath.empty() && fs::exists(config.modelPath / "tokenizer.json")) {
    tokenizer.emplace(BpeTokenizer::load(config.modelPath / "tokenizer.json"));
  } else if (config.trainVocabSize > 0) {
    std::vector<std::string> texts;
    for (const auto& ex : examples) {
      for (const auto& m : ex.messages) texts.push_back(m.content);
    }
    tokenizer.emplace(trainBpeTokenizer(texts, config.trainVocabSize, {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}));
  } else {
    throw makeError("{}: no tokenizer: give tokenizer.path, a model.path with tokenizer.json, or tokenizer.train_vocab_size",
                    config.source.string());
  }
  for (const char* special : {"<|im_start|>", "<|im_end|>"}) {
    if (tokenizer->tokenId(special) < 0) throw makeError("the tokenizer has no {} token, which the ChatML template needs", special);
  }
  std::vector<TokenizedExample> data = tokenizeChatMl(*tokenizer, examples, config.maxTokens, 0);
  if (config.objective.needsSensitivity()) {
    const SensitivityLexer lexer;
    for (auto& ex : data) {
      const auto flags = sensitiveTokenFlags(ex.spans, lexer.analyzeMarkdown(ex.text));
      ex.sensitive.assign(flags.begin(), flags.end());
    }
  }

  // Model.
  torch::manual_seed(config.seed);
  ModelConfig modelConfig;
  if (resumeFrom) {
    modelConfig = ModelConfig::load(*resumeFrom / "config.json");
  } else if (!config.modelPath.empty()) {
    modelConfig = ModelConfig::load(config.modelPath / "config.json");
  } else {
    nlohmann::json j = *config.modelConfig;
    if (!j.contains("vocab_size")) j["vocab_size"] = tokenizer->vocabSize();
    modelConfig = ModelConfig::fromJson(j, config.source.string() + " model.config");
  }
  if (static_cast<std::size_t>(modelConfig.vocabSize) < tokenizer->vocabSize()) {
    throw makeError("the model's vocab_size {} is smaller than the tokenizer's {}", modelConfig.vocabSize, tokenizer->vocabSize());
  }
  // Ranks reading different files (a data file that is not on shared storage, another tokenizer)
  // would each train on their own data while their gradients are summed: refuse before step 1.
  // 53 bits of the hash, so the comparison through doubles is exact.
  const auto fingerprint = [&] { return static_cast<double>(inputsFingerprint(data, modelConfig) >> 11); };
  if (const auto [low, high] = dp.minMax(fingerprint, "comparing the ranks' training inputs"); low != high) {
    throw makeError("data-parallel training ({}): the ranks' training inputs differ (tokenized data, tokenizer or model shape); every rank "
                    "must read the same {}, tokenizer and model files, on storage shared by all nodes",
                    dist.describe(), config.trainData.string());
  }
  torch::Device device = resolveDevice(config.device);
  if (device.is_cuda() && dist.active()) {
    // One GPU per rank: the LOCAL_RANK-th, unless the launcher already narrowed this process to one
    // (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES), and then that one.
    const int visible = static_cast<int>(torch::cuda::device_count());
    const int index = visible == 1 ? 0 : dist.localRank;
    if (index >= visible) {
      throw makeError("data-parallel training ({}): LOCAL_RANK={} needs GPU {}, but this process sees {} GPUs: start at most one rank per "
                      "GPU on each node",
                      dist.describe(), dist.localRank, index, visible);
    }
    device = torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(index));
  }
  // Weights, gradients and two AdamW moments: 16 bytes a parameter, before activations. A config
  // asking for more than the machine has is one line naming the sizes, not an allocator's stack trace.
  const double needBytes = 16.0 * static_cast<double>(modelConfig.parameterCount());
  const double haveBytes = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (device.is_cpu() && needBytes > haveBytes) {
    throw makeError("{}: a model of hidden_size {}, intermediate_size {}, {} layers and vocab_size {} has {:.3g} parameters and needs "
                    "~{:.1f} GB to train; this machine has {:.1f} GB",
                    config.source.string(), modelConfig.hiddenSize, modelConfig.intermediateSize, modelConfig.numLayers, modelConfig.vocabSize,
                    static_cast<double>(modelConfig.parameterCount()), needBytes / 1e9, haveBytes / 1e9);
  }
  std::optional<CausalLm> built;
  try {
    built.emplace(modelConfig);
    (*built)->to(device);
  } catch (const c10::Error& e) {
    throw makeError("{}: cannot build the model ({:.3g} parameters): {}", config.source.string(), static_cast<double>(modelConfig.parameterCount()),
                    e.what_without_backtrace());
  }
  CausalLm model = std::move(*built);
  if (resumeFrom) loadWeights(model, *resumeFrom);
  else if (!config.modelPath.empty()) loadWeights(model, config.modelPath);
  {
    // Same seed and files on every rank make them equal already; broadcasting makes it a guarantee.
    std::vector<torch::Tensor> state = model->parameters();
    for (const auto& buffer : model->buffers()) state.push_back(buffer);
    dp.broadcast(state, "broadcasting the parameters from rank 0");
  }
  model->train();
  // The frozen reference (rho1, or cuset with `confidence: reference`): the starting model's weights
  // (from model.path; for a randomly initialised model, the weights this run starts from).
  std::optional<CausalLm> reference;
  if (config.objective.needsReference() && !config.objective.referenceModel.empty()) {
    const fs::path dir = config.objective.referenceModel;
    const ModelConfig referenceConfig = ModelConfig::load(dir / "config.json");
    if (referenceConfig.vocabSize != modelConfig.vocabSize) {
      throw makeError("{}: the reference model's vocab_size {} differs from the trained model's {}: they must share a tokenizer",
                      dir.string(), referenceConfig.vocabSize, modelConfig.vocabSize);
    }
    reference.emplace(referenceConfig);
    (*reference)->to(device);
    loadWeights(*reference, dir);
    (*reference)->eval();
    for (auto& p : (*reference)->parameters()) p.set_requires_grad(false);
  } else if (config.objective.needsReference()) {
    reference.emplace(modelConfig);
    (*reference)->to(device);
    if (!config.modelPath.empty()) {
      loadWeights(*reference, config.modelPath);
    } else {
      torch::NoGradGuard noGrad;
      auto target = (*reference)->named_parameters();
      for (const auto& p : model->named_parameters()) target[p.key()].copy_(p.value());
    }
    (*reference)->eval();
    for (auto& p : (*reference)->parameters()) p.set_requires_grad(false);
  }

  // Optimiser: no weight decay on norms and biases.
  std::vector<torch::Tensor> decay, noDecay;
  for (auto& p : model->named_parameters()) {
    (p.key().find("norm") != std::string::npos || p.key().ends_with(".bias") ? noDecay : decay).push_back(p.value());
  }
  auto options_ = torch::optim::AdamWOptions(config.lr).betas({config.betas[0], config.betas[1]}).weight_decay(config.weightDecay);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options_));
  groups.emplace_back(noDecay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options_).weight_decay(0.0)));
  torch::optim::AdamW optimizer(std::move(groups));
  std::int64_t step = 0;
  if (resumeFrom) {
    torch::load(optimizer, (*resumeFrom / "optimizer.pt").string());
    step = resumeStep;
    if (leader) truncateMetrics(options.outDir / "metrics.jsonl", step);
    if (leader) log::info("resuming from {} (step {})", resumeFrom->string(), step);
  } else if (leader && options.resume && fs::exists(options.outDir / "metrics.jsonl")) {
    // Interrupted before its first checkpoint: it starts over, and so do its metrics.
    truncateMetrics(options.outDir / "metrics.jsonl", 0);
    log::info("{}: no checkpoint yet, so training starts over at step 0 (metrics.jsonl cleared)", options.outDir.string());
  }

  TrainRunSummary summary;
  summary.startStep = step;
  BatchPlan plan(data, config.batchSize, config.seed);
  const std::int32_t padId = tokenizer->tokenId("<|im_end|>");
  // Only rank 0 writes: metrics, checkpoints, the final model.
  std::ofstream metrics;
  if (leader) metrics.open(options.outDir / "metrics.jsonl", std::ios::app);
  ProgressBar progress("train", static_cast<std::size_t>(std::max<std::int64_t>(0, maxSteps - step)), "step", options.showProgress && leader);
  // This rank's rows are block `rank` of the gathered batch (gatherRows stacks by rank); 0 for one process.
  const std::int64_t firstRow = dist.rank * (config.batchSize / dist.worldSize);
  const std::vector<torch::Tensor> parameters = model->parameters();
  double windowAllReduce = 0.0, windowRankWait = 0.0;
  auto windowStart = std::chrono::steady_clock::now();
  std::int64_t windowTokens = 0;
  double windowLoss = 0.0;
  int windowSteps = 0;
  ObjectiveWindow windowStats;
  bool first = true;
  for (; step < maxSteps; ++step) {
    const double lr = config.learningRate(step);
    for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    optimizer.zero_grad();
    double stepLoss = 0.0;
    std::int64_t stepTokens = 0;
    for (std::int64_t a = 0; a < config.accumulation; ++a) {
      Batch b = plan.batch(step * config.accumulation + a, padId, dist.rank, dist.worldSize);
      b.inputs = b.inputs.to(device);
      b.targets = b.targets.to(device);
      b.mask = b.mask.to(device);
      torch::Tensor logits;
      {
        const Bf16Autocast autocast(config.precision == "bf16", device);
        logits = model->forward(b.inputs).to(torch::kFloat32);  // (B, T, V); the loss in float32
      }
      const auto losses = tokenLosses(logits, b.targets);  // (B, T)
      ObjectiveBatch ob{losses, b.mask, b.sensitive.to(device), torch::Tensor(), step};
      if (reference) {
        c10::InferenceMode inference;  // cheaper than NoGradGuard: no version counters, no views tracking
        const Bf16Autocast autocast(config.precision == "bf16", device);
        ob.referenceLosses = tokenLosses((*reference)->forward(b.inputs).to(torch::kFloat32), b.targets);
      }
      // With several ranks the plan is made on the whole global micro-batch, so this rank's loss is its
      // share of the single-process loss, and summing the ranks' gradients gives that loss's gradient.
      const ObjectivePlan objectivePlan = planObjective(config.objective, dp.active() ? gatherObjectiveBatch(dp, ob, step) : ob);
      const auto loss = objectiveLoss(config.objective, losses, objectivePlan, firstRow) / static_cast<double>(config.accumulation);
      windowStats.add(objectivePlan.stats);
      loss.backward();
      stepLoss += loss.item<double>();
      stepTokens += b.tokens;
    }
    dp.sumGradients(parameters, fmt::format("the gradient all-reduce of step {}", step + 1));
    windowAllReduce += dp.takeGradientSeconds();
    windowRankWait += dp.takeWaitSeconds();
    if (dp.active()) {
      const auto totals = dp.sum({stepLoss, static_cast<double>(stepTokens)}, fmt::format("summing the loss of step {}", step + 1));
      stepLoss = totals[0];
      stepTokens = static_cast<std::int64_t>(totals[1]);
    }
    windowTokens += stepTokens;
    if (config.gradClip > 0) torch::nn::utils::clip_grad_norm_(parameters, config.gradClip);
    optimizer.step();
    windowLoss += stepLoss;
    ++windowSteps;
    progress.setSuffix(fmt::format("loss {:.4f} lr {:.2e}", stepLoss, lr));
    progress.advance();
    const std::int64_t done = step + 1;
    if (done % config.logEvery == 0 || done == maxSteps) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - windowStart).count();
      const double loss = windowLoss / windowSteps;
      nlohmann::json record = {{"step", done}, {"loss", loss}, {"lr", lr}, {"tokens_per_s", seconds > 0 ? windowTokens / seconds : 0.0},
                               {"objective", objectiveName(config.objective.kind)}};
      windowStats.writeTo(record);
      if (dp.active()) {
        record["ranks"] = dist.worldSize;
        record["allreduce_s_per_step"] = windowAllReduce / windowSteps;
        record["rank_wait_s_per_step"] = windowRankWait / windowSteps;
      }
      if (leader) {
        metrics << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
        if (!metrics) throw makeError("{}: cannot append a metrics record (is the disk full?)", (options.outDir / "metrics.jsonl").string());
      }
      windowStats = ObjectiveWindow();
      if (first) summary.firstLoss = loss;
      first = false;
      summary.lastLoss = loss;
      windowStart = std::chrono::steady_clock::now();
      windowTokens = 0;
      windowLoss = 0.0;
      windowSteps = 0;
      windowAllReduce = 0.0;
      windowRankWait = 0.0;
    }
    if (done % config.saveEvery == 0 || done == maxSteps) {
      // Rank 0's checkpoint stands for every rank only if they all hold the same weights.
      if (const auto [low, high] = dp.minMax([&] { return parameterChecksum(model); }, fmt::format("comparing the ranks' parameters at step {}", done)); low != high) {
        throw makeError("data-parallel training ({}): the ranks' parameters differ at step {} (checksums {:.17g} and {:.17g}); their "
                        "gradients or optimizer states diverged, so no checkpoint is written",
                        dist.describe(), done, low, high);
      }
      if (leader) saveTrainingCheckpoint(options.outDir, fmt::format("step-{}", done), model, optimizer, *tokenizer, done, config);
    }
  }
  progress.finish();
  summary.endStep = step;
  // The final model as a plain HF folder.
  const fs::path final = options.outDir / "final";
  if (leader) {
    fs::remove_all(final);
    saveCheckpoint(model, final);
    tokenizer->save(final / "tokenizer.json");
  }
  summary.finalCheckpoint = final;
  return summary;
}

}  // namespace cuset
