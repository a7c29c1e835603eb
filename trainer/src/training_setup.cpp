// runTraining's set-up phases (training_setup.hpp): everything built before the first step.
#include "training_setup.hpp"

#include "optimizer_sharding.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <numeric>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/trainer/lora_adapter.hpp"
#include "cuset/trainer/sensitivity_lexer.hpp"

namespace fs = std::filesystem;

namespace cuset::detail {
namespace {

std::optional<fs::path> latestCheckpoint(const fs::path& outDir) {
  const fs::path latest = outDir / "checkpoints" / "latest";
  if (!fs::exists(latest)) return std::nullopt;
  return outDir / "checkpoints" / readFile(latest);
}

std::int64_t checkpointStep(const fs::path& checkpoint) {
  const fs::path state = checkpoint / "trainer_state.json";
  return jsonInteger(readJsonFile(state).at("step"), state.string() + ": step", 0);
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

void freeze(CausalLm& model) {
  model->eval();
  for (auto& p : model->parameters()) p.set_requires_grad(false);
}

}  // namespace

ResumePoint findResumePoint(const TrainRunOptions& options) {
  const auto checkpoint = options.resume ? latestCheckpoint(options.outDir) : std::nullopt;
  if (!options.resume && fs::exists(options.outDir / "metrics.jsonl")) {
    throw makeError("{} already holds a training run; pass --resume to continue it, or choose another --out", options.outDir.string());
  }
  return {checkpoint, checkpoint ? checkpointStep(*checkpoint) : 0};
}

void agreeOnRunFolder(DataParallel& dp, const ResumePoint& resume, const TrainRunOptions& options) {
  if (const auto [low, high] = dp.minMax([&] { return static_cast<double>(resume.step); }, "comparing the checkpoints the ranks resume from");
      low != high) {
    throw makeError(
        "{}: the ranks would resume from different steps ({} and {}): --out must be one folder that every rank reads, on "
        "storage shared by all nodes",
        options.outDir.string(), static_cast<std::int64_t>(low), static_cast<std::int64_t>(high));
  }
  if (dp.env().leader()) fs::create_directories(options.outDir / "checkpoints");
}

namespace {

BpeTokenizer loadTrainingTokenizer(const TrainConfig& config, const ResumePoint& resume, const std::vector<ChatExample>& examples) {
  if (resume.checkpoint) return BpeTokenizer::load(*resume.checkpoint / "tokenizer.json");
  if (!config.tokenizerPath.empty()) return BpeTokenizer::load(config.tokenizerPath);
  if (!config.modelPath.empty() && fs::exists(config.modelPath / "tokenizer.json")) return BpeTokenizer::load(config.modelPath / "tokenizer.json");
  if (config.trainVocabSize > 0) {
    std::vector<std::string> texts;
    for (const auto& ex : examples) {
      for (const auto& m : ex.messages) texts.push_back(m.content);
    }
    return trainBpeTokenizer(texts, config.trainVocabSize, {"<|endoftext|>", "<|im_start|>", "<|im_end|>"});
  }
  throw makeError("{}: no tokenizer: give tokenizer.path, a model.path with tokenizer.json, or tokenizer.train_vocab_size", config.source.string());
}

// The chat template beside the tokenizer: the checkpoint's, tokenizer.path's folder's, the model's;
// tokenizer.chat_template replaces it (a checkpoint already holds that one).
ChatFormat loadTrainingChatFormat(const TrainConfig& config, const ResumePoint& resume) {
  if (resume.checkpoint) return ChatFormat::fromFolder(*resume.checkpoint);
  ChatFormat format = !config.tokenizerPath.empty() ? ChatFormat::fromFolder(config.tokenizerPath.parent_path())
                      : !config.modelPath.empty()   ? ChatFormat::fromFolder(config.modelPath)
                                                    : ChatFormat::chatMl();
  return config.chatTemplatePath.empty() ? format : format.withTemplateFile(config.chatTemplatePath);
}

}  // namespace

void TrainingText::save(const fs::path& folder) const {
  tokenizer.save(folder / "tokenizer.json");
  format.save(folder);
}

TrainingText loadTrainingText(const TrainConfig& config, const ResumePoint& resume, const std::vector<ChatExample>& examples) {
  BpeTokenizer tokenizer = loadTrainingTokenizer(config, resume, examples);
  ChatFormat format = loadTrainingChatFormat(config, resume);
  if (format.isChatMl()) {
    for (const char* special : {"<|im_start|>", "<|im_end|>"}) {
      if (tokenizer.tokenId(special) < 0) {
        throw makeError("the tokenizer has no {} token, which the ChatML template needs (the model folder has no chat_template)", special);
      }
    }
  }
  const std::string pad = format.padToken();
  const std::int32_t padId = tokenizer.tokenId(pad);
  if (padId < 0) throw makeError("{}: the pad token '{}' is not in the tokenizer's vocabulary", format.name(), pad);
  return TrainingText{std::move(tokenizer), std::move(format), padId};
}

std::vector<TokenizedExample> tokenizeTrainingData(const TrainConfig& config, const TrainingText& text, const std::vector<ChatExample>& examples) {
  std::vector<TokenizedExample> data = tokenizeChat(text.tokenizer, text.format, examples, config.maxTokens, 0);
  if (config.objective.needsSensitivity()) {
    const SensitivityLexer lexer;
    for (auto& ex : data) {
      const auto flags = sensitiveTokenFlags(ex.spans, lexer.analyzeMarkdown(ex.text));
      ex.sensitive.assign(flags.begin(), flags.end());
    }
  }
  return data;
}

ModelConfig resolveModelConfig(const TrainConfig& config, const ResumePoint& resume, const BpeTokenizer& tokenizer) {
  ModelConfig modelConfig;
  if (resume.checkpoint && !config.adapter) {
    modelConfig = ModelConfig::load(*resume.checkpoint / "config.json");
  } else if (!config.modelPath.empty()) {  // an adapter's checkpoints hold the adapters alone
    if (isAdapterFolder(config.modelPath)) {
      throw makeError(
          "{}: model.path {} is a LoRA adapter folder, not a model; fold it into its base first (cuset merge-adapter {} --out DIR) "
          "and train from DIR",
          config.source.string(), config.modelPath.string(), config.modelPath.string());
    }
    modelConfig = ModelConfig::load(config.modelPath / "config.json");
  } else {
    nlohmann::json j = *config.modelConfig;
    if (!j.contains("vocab_size")) j["vocab_size"] = tokenizer.vocabSize();
    modelConfig = ModelConfig::fromJson(j, config.source.string() + " model.config");
  }
  if (static_cast<std::size_t>(modelConfig.vocabSize) < tokenizer.vocabSize()) {
    throw makeError("the model's vocab_size {} is smaller than the tokenizer's {}", modelConfig.vocabSize, tokenizer.vocabSize());
  }
  return modelConfig;
}

// Refused before step 1 (a data file that is not on shared storage, another tokenizer). 53 bits of the
// hash, so the comparison through doubles is exact.
void requireSameInputsOnEveryRank(DataParallel& dp, const TrainConfig& config, const std::vector<TokenizedExample>& data,
                                  const ModelConfig& modelConfig) {
  const auto fingerprint = [&] { return static_cast<double>(inputsFingerprint(data, modelConfig) >> 11); };
  if (const auto [low, high] = dp.minMax(fingerprint, "comparing the ranks' training inputs"); low != high) {
    throw makeError(
        "data-parallel training ({}): the ranks' training inputs differ (tokenized data, tokenizer or model shape); every rank "
        "must read the same {}, tokenizer and model files, on storage shared by all nodes",
        dp.env().describe(), config.trainData.string());
  }
}

torch::Device trainingDevice(const TrainConfig& config, const DistributedEnv& dist) {
  const torch::Device device = resolveDevice(config.device);
  if (!device.is_cuda() || !dist.active()) return device;
  // One GPU per rank: the LOCAL_RANK-th, unless the launcher already narrowed this process to one
  // (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES), and then that one.
  const int visible = static_cast<int>(torch::cuda::device_count());
  const int index = visible == 1 ? 0 : dist.localRank;
  if (index >= visible) {
    throw makeError(
        "data-parallel training ({}): LOCAL_RANK={} needs GPU {}, but this process sees {} GPUs: start at most one rank per "
        "GPU on each node",
        dist.describe(), dist.localRank, index, visible);
  }
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(index));
}

// Weights, gradients and two AdamW moments: 16 bytes a parameter, before activations; with adapters
// the frozen weights alone (4 bytes, on the CPU) and the adapters' share, which is small.
void requireHostMemory(const TrainConfig& config, const ModelConfig& modelConfig, torch::Device device) {
  const double needBytes = (config.adapter ? 4.0 : 16.0) * static_cast<double>(modelConfig.parameterCount());
  const double haveBytes = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (device.is_cpu() && needBytes > haveBytes) {
    throw makeError(
        "{}: a model of hidden_size {}, intermediate_size {}, {} layers and vocab_size {} has {:.3g} parameters and needs "
        "~{:.1f} GB to train; this machine has {:.1f} GB",
        config.source.string(), modelConfig.hiddenSize, modelConfig.intermediateSize, modelConfig.numLayers, modelConfig.vocabSize,
        static_cast<double>(modelConfig.parameterCount()), needBytes / 1e9, haveBytes / 1e9);
  }
}

CausalLm buildTrainedModel(const TrainConfig& config, const ModelConfig& modelConfig, torch::Device device, const ResumePoint& resume,
                           DataParallel& dp) {
  std::optional<CausalLm> built;
  try {
    built.emplace(modelConfig);
    (*built)->to(device);
  } catch (const c10::Error& e) {
    throw makeError("{}: cannot build the model ({:.3g} parameters): {}", config.source.string(), static_cast<double>(modelConfig.parameterCount()),
                    e.what_without_backtrace());
  }
  CausalLm model = std::move(*built);
  if (config.adapter) {
    // The base from model.path, frozen; the adapters fresh, or the checkpoint's when resuming.
    loadWeights(model, config.modelPath);
    attachLora(model, *config.adapter);
    if (resume.checkpoint) loadAdapterWeights(model, *resume.checkpoint);
    const bool bf16Base = config.adapter->baseDtype == "bf16" || (config.adapter->baseDtype == "auto" && device.is_cuda());
    if (bf16Base) {
      torch::NoGradGuard noGrad;
      for (auto& p : model->parameters()) {
        if (!p.requires_grad()) p.set_data(p.to(torch::kBFloat16));
      }
    }
  } else if (resume.checkpoint) {
    loadWeights(model, *resume.checkpoint);
  } else if (!config.modelPath.empty()) {
    loadWeights(model, config.modelPath);
  }
  // Same seed and files on every rank make them equal already; broadcasting makes it a guarantee.
  std::vector<torch::Tensor> state = model->parameters();
  for (const auto& buffer : model->buffers()) state.push_back(buffer);
  dp.broadcast(state, "broadcasting the parameters from rank 0");
  model->activationCheckpointing = config.activationCheckpointing;
  model->train();
  return model;
}

// The reference is the starting model's weights: from model.path, or for a randomly initialised model
// the weights this run starts from; or objective.reference_model when given.
std::optional<CausalLm> buildReferenceModel(const TrainConfig& config, const ModelConfig& modelConfig, CausalLm& model, torch::Device device) {
  if (!config.objective.needsReference()) return std::nullopt;
  // With adapters the frozen base is the starting model: the trained model with its adapters off.
  if (config.adapter && config.objective.referenceModel.empty()) return std::nullopt;
  std::optional<CausalLm> reference;
  if (!config.objective.referenceModel.empty()) {
    const fs::path dir = config.objective.referenceModel;
    const ModelConfig referenceConfig = ModelConfig::load(dir / "config.json");
    if (referenceConfig.vocabSize != modelConfig.vocabSize) {
      throw makeError("{}: the reference model's vocab_size {} differs from the trained model's {}: they must share a tokenizer", dir.string(),
                      referenceConfig.vocabSize, modelConfig.vocabSize);
    }
    reference.emplace(referenceConfig);
    (*reference)->to(device);
    loadWeights(*reference, dir);
  } else {
    reference.emplace(modelConfig);
    (*reference)->to(device);
    if (!config.modelPath.empty()) {
      loadWeights(*reference, config.modelPath);
    } else {
      torch::NoGradGuard noGrad;
      auto target = (*reference)->named_parameters();
      for (const auto& p : model->named_parameters()) target[p.key()].copy_(p.value());
    }
  }
  freeze(*reference);
  return reference;
}

std::int64_t restoreTrainingState(torch::optim::AdamW& optimizer, const ResumePoint& resume, const TrainRunOptions& options, bool sharded) {
  const DistributedEnv& dist = options.distributed;
  const bool leader = dist.leader();
  const fs::path metrics = options.outDir / "metrics.jsonl";
  if (resume.checkpoint) {
    requireSameStateLayout(*resume.checkpoint, sharded, dist);
    torch::load(optimizer, optimizerStateFile(*resume.checkpoint, sharded, dist.rank).string());
    if (leader) truncateMetrics(metrics, resume.step);
    if (leader) log::info("resuming from {} (step {})", resume.checkpoint->string(), resume.step);
    return resume.step;
  }
  if (leader && options.resume && fs::exists(metrics)) {
    // Interrupted before its first checkpoint: it starts over, and so do its metrics.
    truncateMetrics(metrics, 0);
    log::info("{}: no checkpoint yet, so training starts over at step 0 (metrics.jsonl cleared)", options.outDir.string());
  }
  return 0;
}

}  // namespace cuset::detail
