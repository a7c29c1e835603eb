#pragma once
// LoRA adapters (Hu et al., 2021) as the training config asks for them and as PEFT stores them
// (adapter_config.json): the base weights frozen, each targeted projection W x becomes
// W x + (alpha / r) B A dropout(x), with A (r, in) and B (out, r), B starting at zero.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace cuset {

// The projections an adapter can target, by their Hugging Face module names.
inline const std::vector<std::string> kLoraTargetModules = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};

struct LoraConfig {
  std::int64_t r = 16;
  double alpha = 32.0;
  double dropout = 0.05;
  std::vector<std::string> targetModules = kLoraTargetModules;
  // The frozen base's dtype: "auto" (bfloat16 on a GPU, float32 on the CPU, whose bfloat16 matmuls are
  // slow), "bf16" or "fp32".
  std::string baseDtype = "auto";

  double scaling() const { return alpha / static_cast<double>(r); }
  // Throws cuset::Error naming `source` (when not empty) for a rank, alpha or dropout out of range or an unknown module.
  void validate(const std::string& source) const;
  // PEFT's adapter_config.json for these adapters on the base model at `basePath`.
  nlohmann::json toPeftConfig(const std::filesystem::path& basePath) const;
  // Reads one written by PEFT or by toPeftConfig; refuses what these adapters cannot be (DoRA,
  // rsLoRA, per-module ranks, bias training, modules_to_save), naming the field.
  static LoraConfig fromPeftConfig(const nlohmann::json& j, const std::string& source);
};

// `cuset merge-adapter`: the adapter folder's base with its adapters folded in (W += alpha/r B A),
// written to `out` as a full HF checkpoint (float32, or bfloat16) with the tokenizer. Needs LibTorch
// (defined in lora_adapter.cpp).
void mergeAdapterFolder(const std::filesystem::path& adapter, const std::filesystem::path& out, bool bfloat16 = false);

// A folder holding a PEFT adapter (adapter_config.json) rather than a full model (config.json).
bool isAdapterFolder(const std::filesystem::path& dir);
// The base model an adapter folder names (base_model_name_or_path, relative to the folder when not absolute).
std::filesystem::path adapterBasePath(const std::filesystem::path& dir);

}  // namespace cuset
