#pragma once
// What runTraining (training.cpp) builds before its first step, one function a phase, in the order it
// calls them: where to resume from, the tokenizer and tokenized data, the model's config, its device,
// the model and its frozen reference, the optimizer. Private to cuset_trainer_torch.
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/model_config.hpp"
#include "cuset/trainer/tokenizer.hpp"
#include "cuset/trainer/training.hpp"
#include "data_parallel.hpp"

namespace cuset::detail {

// The checkpoint a run continues from, if any, and its step.
struct ResumePoint {
  std::optional<std::filesystem::path> checkpoint;
  std::int64_t step = 0;
};

// Refuses to write over a finished or running run folder unless asked to resume it.
ResumePoint findResumePoint(const TrainRunOptions& options);
// Every rank has looked at the run folder before rank 0 may write to it, and they resume from one step.
void agreeOnRunFolder(DataParallel& dp, const ResumePoint& resume, const TrainRunOptions& options);

// The tokenizer and chat format the data is rendered with, written together into every checkpoint.
struct TrainingText {
  BpeTokenizer tokenizer;
  ChatFormat format;
  std::int32_t padId;  // the format's pad token (pad_token, else eos_token, else <|im_end|>)
  void save(const std::filesystem::path& folder) const;
};
// The checkpoint's tokenizer and template when resuming; else tokenizer.path's folder, the model's, or
// a tokenizer trained on the data with ChatML.
TrainingText loadTrainingText(const TrainConfig& config, const ResumePoint& resume, const std::vector<ChatExample>& examples);
// Token ids and loss masks of the data in the format, with CUDA-sensitivity flags where the objective
// needs them.
std::vector<TokenizedExample> tokenizeTrainingData(const TrainConfig& config, const TrainingText& text, const std::vector<ChatExample>& examples);
ModelConfig resolveModelConfig(const TrainConfig& config, const ResumePoint& resume, const BpeTokenizer& tokenizer);
// Ranks reading different files would each train on their own data while their gradients are summed.
void requireSameInputsOnEveryRank(DataParallel& dp, const TrainConfig& config, const std::vector<TokenizedExample>& data,
                                  const ModelConfig& modelConfig);

// config.device; with one rank per GPU, this rank's.
torch::Device trainingDevice(const TrainConfig& config, const DistributedEnv& dist);
// A model too large for this machine is one line naming the sizes, not an allocator's stack trace.
void requireHostMemory(const TrainConfig& config, const ModelConfig& modelConfig, torch::Device device);
// Built on `device` with the checkpoint's, model.path's or fresh weights, equal on every rank, in train mode.
CausalLm buildTrainedModel(const TrainConfig& config, const ModelConfig& modelConfig, torch::Device device, const ResumePoint& resume,
                           DataParallel& dp);
// The frozen reference of rho1 and of cuset's `confidence: reference`; nullopt when the objective has none.
std::optional<CausalLm> buildReferenceModel(const TrainConfig& config, const ModelConfig& modelConfig, CausalLm& model, torch::Device device);

// Restores the optimizer state and trims metrics.jsonl to the step resumed from; returns that step.
std::int64_t restoreTrainingState(torch::optim::AdamW& optimizer, const ResumePoint& resume, const TrainRunOptions& options, bool sharded);

}  // namespace cuset::detail
