#pragma once
// LoRA adapters on a CausalLm (lora.hpp for the configuration): attaching them, switching them off
// (the frozen base is rho1's reference for free), and PEFT's on-disk form, which vLLM serves
// (`vllm serve BASE --enable-lora --lora-modules NAME=DIR`) and which merges into a full checkpoint.
// Includes LibTorch.
#include <filesystem>
#include <string>

#include "cuset/trainer/chat_format.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/lora.hpp"

namespace cuset {

// Adds fresh adapters to every targeted projection and freezes everything else (requires_grad false).
void attachLora(CausalLm& model, const LoraConfig& config);
// With adapters off the model is its frozen base.
void setAdaptersEnabled(CausalLm& model, bool enabled);
// While alive, the model computes as its base.
class AdaptersDisabled {
 public:
  explicit AdaptersDisabled(CausalLm& model) : model_(model) { setAdaptersEnabled(model_, false); }
  ~AdaptersDisabled() { setAdaptersEnabled(model_, true); }
  AdaptersDisabled(const AdaptersDisabled&) = delete;
  AdaptersDisabled& operator=(const AdaptersDisabled&) = delete;

 private:
  CausalLm& model_;
};

// PEFT's tensor name for a parameter of the model ("base_model.model." + its HF name).
std::string peftTensorName(const std::string& parameterName);
// adapter_config.json and adapter_model.safetensors (float32, PEFT's names) in `dir`, each atomically.
void saveAdapter(CausalLm& model, const LoraConfig& config, const std::filesystem::path& basePath, const std::filesystem::path& dir);
// Loads the adapter weights of `dir` into a model with the same adapters attached; shapes must match.
void loadAdapterWeights(CausalLm& model, const std::filesystem::path& dir);
// Folds every adapter into its base weight (W += alpha/r B A) and removes them.
void mergeAdapters(CausalLm& model);

// A model folder as generation and analysis read it: a full HF checkpoint (config.json), or a PEFT
// adapter folder whose base (base_model_name_or_path) is loaded first. On `device`, in eval mode.
CausalLm loadModelFolder(const std::filesystem::path& dir, torch::Device device);
// The tokenizer.json a model folder is used with: its own, else an adapter's base's.
std::filesystem::path modelTokenizerPath(const std::filesystem::path& dir);
// The chat format a model folder is used with: the template beside its tokenizer (ChatML without one).
ChatFormat modelChatFormat(const std::filesystem::path& dir);

}  // namespace cuset
