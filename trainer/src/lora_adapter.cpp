#include "cuset/trainer/lora_adapter.hpp"

#include <fmt/ranges.h>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/trainer/safetensors.hpp"

namespace fs = std::filesystem;

namespace cuset {

void attachLora(CausalLm& model, const LoraConfig& config) {
  for (auto& p : model->parameters()) p.set_requires_grad(false);
  for (const auto& module : config.targetModules) {
    for (ProjectionImpl* projection : model->projections(module)) projection->attachLora(config.r, config.alpha, config.dropout);
  }
}

void setAdaptersEnabled(CausalLm& model, bool enabled) {
  for (const auto& module : kLoraTargetModules) {
    for (ProjectionImpl* projection : model->projections(module)) projection->loraEnabled = enabled;
  }
}

std::string peftTensorName(const std::string& parameterName) { return "base_model.model." + parameterName; }

void saveAdapter(CausalLm& model, const LoraConfig& config, const fs::path& basePath, const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<torch::Tensor> keepAlive;
  std::vector<safetensors::TensorToWrite> tensors;
  for (const auto& p : model->named_parameters()) {
    if (p.key().find(".lora_") == std::string::npos) continue;
    keepAlive.push_back(p.value().detach().to(torch::kCPU, torch::kFloat32).contiguous());
    const auto& t = keepAlive.back();
    tensors.push_back({peftTensorName(p.key()), safetensors::DType::F32, t.sizes().vec(),
                       std::span<const std::byte>(static_cast<const std::byte*>(t.data_ptr()), t.nbytes())});
  }
  if (tensors.empty()) throw makeError("{}: the model has no adapters to save", dir.string());
  safetensors::write(dir / "adapter_model.safetensors", tensors, {{"format", "pt"}});
  writeJsonFileAtomic(dir / "adapter_config.json", config.toPeftConfig(basePath));
}

void loadAdapterWeights(CausalLm& model, const fs::path& dir) {
  const auto file = safetensors::File::open(dir / "adapter_model.safetensors");
  torch::NoGradGuard noGrad;
  std::size_t loaded = 0;
  for (auto& p : model->named_parameters()) {
    if (p.key().find(".lora_") == std::string::npos) continue;
    // PEFT writes "base_model.model.<name>"; some versions keep the adapter's name (".default").
    const std::string name = peftTensorName(p.key());
    const safetensors::TensorView* t = file.find(name);
    if (t == nullptr) {
      std::string withDefault = name;
      withDefault.insert(withDefault.rfind(".weight"), ".default");
      t = file.find(withDefault);
    }
    if (t == nullptr) throw makeError("{}: no tensor '{}' (the adapter's target_modules or r differ from the model's)", file.path().string(), name);
    if (t->shape != p.value().sizes().vec()) {
      throw makeError("{}: tensor '{}' has shape [{}] but the model needs [{}]", file.path().string(), name, fmt::join(t->shape, ", "),
                      fmt::join(p.value().sizes().vec(), ", "));
    }
    p.value().copy_(tensorView(*t).to(p.value().device(), p.value().scalar_type()));
    ++loaded;
  }
  if (loaded != file.tensors().size()) {
    throw makeError("{}: holds {} tensors but the model's adapters take {}: its target_modules differ from adapter_config.json's",
                    file.path().string(), file.tensors().size(), loaded);
  }
}

void mergeAdapters(CausalLm& model) {
  for (const auto& module : kLoraTargetModules) {
    for (ProjectionImpl* projection : model->projections(module)) projection->mergeLora();
  }
}

CausalLm loadModelFolder(const fs::path& dir, torch::Device device) {
  const bool adapter = isAdapterFolder(dir);
  const fs::path base = adapter ? adapterBasePath(dir) : dir;
  CausalLm model(ModelConfig::load(base / "config.json"));
  model->to(device);
  loadWeights(model, base);
  if (adapter) {
    const fs::path configPath = dir / "adapter_config.json";
    attachLora(model, LoraConfig::fromPeftConfig(readJsonFile(configPath), configPath.string()));
    loadAdapterWeights(model, dir);
  }
  model->eval();
  return model;
}

void mergeAdapterFolder(const fs::path& adapter, const fs::path& out, bool bfloat16) {
  if (!isAdapterFolder(adapter))
    throw makeError("{}: not a LoRA adapter folder (no adapter_config.json, or a config.json beside it)", adapter.string());
  CausalLm model = loadModelFolder(adapter, torch::kCPU);
  mergeAdapters(model);
  saveCheckpoint(model, out, bfloat16 ? torch::kBFloat16 : torch::kFloat32);
  const fs::path tokenizer = modelTokenizerPath(adapter);
  if (fs::exists(tokenizer)) fs::copy_file(tokenizer, out / "tokenizer.json", fs::copy_options::overwrite_existing);
  modelChatFormat(adapter).save(out);  // the chat template travels with the tokenizer
}

ChatFormat modelChatFormat(const fs::path& dir) { return ChatFormat::fromFolder(modelTokenizerPath(dir).parent_path()); }

fs::path modelTokenizerPath(const fs::path& dir) {
  if (fs::exists(dir / "tokenizer.json") || !isAdapterFolder(dir)) return dir / "tokenizer.json";
  return adapterBasePath(dir) / "tokenizer.json";
}

}  // namespace cuset
