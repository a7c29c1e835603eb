#include "cuset/trainer/lora.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"

namespace cuset {

void LoraConfig::validate(const std::string& source) const {
  const std::string at = source.empty() ? std::string() : source + ": ";
  if (r < 1 || r > 4096) throw makeError("{}adapter.r = {} must be between 1 and 4096", at, r);
  if (!(alpha > 0) || alpha > 1e6) throw makeError("{}adapter.alpha = {} must be positive", at, alpha);
  if (!(dropout >= 0.0 && dropout < 1.0)) throw makeError("{}adapter.dropout = {} must be in [0, 1)", at, dropout);
  if (targetModules.empty()) throw makeError("{}adapter.target_modules is empty", at);
  for (const auto& m : targetModules) {
    if (std::find(kLoraTargetModules.begin(), kLoraTargetModules.end(), m) == kLoraTargetModules.end()) {
      throw makeError("{}adapter target module '{}' is not one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj", at, m);
    }
  }
  if (baseDtype != "auto" && baseDtype != "bf16" && baseDtype != "fp32") throw makeError("{}adapter.base_dtype must be auto, bf16 or fp32", at);
}

nlohmann::json LoraConfig::toPeftConfig(const std::filesystem::path& basePath) const {
  // The fields PEFT's LoraConfig writes, with the values that describe plain LoRA; vLLM reads r,
  // lora_alpha, target_modules, bias, modules_to_save, use_rslora and use_dora from them.
  return {{"peft_type", "LORA"},
          {"task_type", "CAUSAL_LM"},
          {"base_model_name_or_path", basePath.string()},
          {"r", r},
          {"lora_alpha", alpha},
          {"lora_dropout", dropout},
          {"target_modules", targetModules},
          {"bias", "none"},
          {"fan_in_fan_out", false},
          {"inference_mode", true},
          {"init_lora_weights", true},
          {"modules_to_save", nullptr},
          {"layers_to_transform", nullptr},
          {"layers_pattern", nullptr},
          {"rank_pattern", nlohmann::json::object()},
          {"alpha_pattern", nlohmann::json::object()},
          {"use_rslora", false},
          {"use_dora", false},
          {"revision", nullptr}};
}

LoraConfig LoraConfig::fromPeftConfig(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw makeError("{}: adapter_config.json must be a JSON object", source);
  if (j.value("peft_type", std::string()) != "LORA") throw makeError("{}: peft_type must be LORA", source);
  LoraConfig c;
  if (!j.contains("r") || !j["r"].is_number_integer()) throw makeError("{}: 'r' must be an integer", source);
  c.r = j["r"].get<std::int64_t>();
  if (!j.contains("lora_alpha") || !j["lora_alpha"].is_number()) throw makeError("{}: 'lora_alpha' must be a number", source);
  c.alpha = j["lora_alpha"].get<double>();
  c.dropout = j.value("lora_dropout", 0.0);
  const auto& targets = j.contains("target_modules") ? j["target_modules"] : nlohmann::json();
  if (!targets.is_array()) throw makeError("{}: 'target_modules' must be a list of module names", source);
  c.targetModules = targets.get<std::vector<std::string>>();
  auto refuse = [&](bool bad, const char* what) {
    if (bad) throw makeError("{}: {} is not supported", source, what);
  };
  refuse(j.value("use_dora", false), "use_dora = true");
  refuse(j.value("use_rslora", false), "use_rslora = true");
  refuse(j.value("fan_in_fan_out", false), "fan_in_fan_out = true");
  refuse(j.value("bias", std::string("none")) != "none", "a 'bias' other than none");
  refuse(j.contains("modules_to_save") && !j["modules_to_save"].is_null() && !j["modules_to_save"].empty(), "modules_to_save");
  refuse(j.contains("rank_pattern") && !j["rank_pattern"].empty(), "rank_pattern");
  refuse(j.contains("alpha_pattern") && !j["alpha_pattern"].empty(), "alpha_pattern");
  refuse(j.contains("layers_to_transform") && !j["layers_to_transform"].is_null(), "layers_to_transform");
  c.validate(source);
  return c;
}

bool isAdapterFolder(const std::filesystem::path& dir) {
  return std::filesystem::exists(dir / "adapter_config.json") && !std::filesystem::exists(dir / "config.json");
}

std::filesystem::path adapterBasePath(const std::filesystem::path& dir) {
  const auto j = readJsonFile(dir / "adapter_config.json");
  const std::string base = j.value("base_model_name_or_path", std::string());
  if (base.empty()) throw makeError("{}: base_model_name_or_path is empty; give the base model's folder", (dir / "adapter_config.json").string());
  const std::filesystem::path p(base);
  return p.is_absolute() ? p : dir / p;
}

}  // namespace cuset
