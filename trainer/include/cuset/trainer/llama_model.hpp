#pragma once
// A Llama/Qwen2-family decoder in LibTorch, laid out with Hugging Face's module names so that
// named_parameters() are HF tensor names ("model.layers.0.self_attn.q_proj.weight").
// Includes LibTorch: only the trainer's model, training and generation files include this header.
//
// Dimensions: B batch, T new tokens, P tokens already cached, C hidden, H heads, Hkv kv heads,
// D head dim, V vocab.
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "cuset/trainer/model_config.hpp"
#include "cuset/trainer/safetensors.hpp"

namespace cuset {

// Keys and values of every layer for the tokens seen so far, for incremental decoding.
struct KvCache {
  std::vector<torch::Tensor> keys;    // per layer (B, Hkv, P, D)
  std::vector<torch::Tensor> values;  // per layer (B, Hkv, P, D)
  std::int64_t length() const { return keys.empty() || !keys[0].defined() ? 0 : keys[0].size(2); }
};

struct RmsNormImpl : torch::nn::Module {
  RmsNormImpl(std::int64_t size, double eps);
  torch::Tensor forward(const torch::Tensor& x);  // (..., C)
  torch::Tensor weight;                           // (C)
  double eps;
};
TORCH_MODULE(RmsNorm);

// Rotary position embedding, HF "rotate_half" convention: dimension i pairs with i + D/2, with the
// config's rope_scaling (linear, dynamic NTK, llama3, yarn) as transformers computes it.
class Rope {
 public:
  explicit Rope(const ModelConfig& c);
  Rope(std::int64_t headDim, double theta);  // unscaled
  // x: (B, heads, T, D), positions offset..offset+T-1
  torch::Tensor apply(const torch::Tensor& x, std::int64_t offset) const;
  // The same with the tables of cosAndSin(), which one forward computes once for all its layers.
  static torch::Tensor apply(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  // cos and sin of the rotation angles at positions offset..offset+T-1: each (T, D), in `like`'s dtype
  // and device (yarn: times its attention factor).
  std::pair<torch::Tensor, torch::Tensor> cosAndSin(std::int64_t offset, std::int64_t T, const torch::Tensor& like) const;

 private:
  torch::Tensor invFreq_;  // (D/2)
  double attentionScaling_ = 1.0;
  // dynamic NTK: past `dynamicFrom` positions the base grows with the sequence (recomputed per forward).
  std::int64_t headDim_ = 0, dynamicFrom_ = 0;
  double theta_ = 10000.0, dynamicFactor_ = 1.0;
};

// What every layer's attention shares in one forward: the rotary tables for its positions and the
// causal mask, computed once rather than per layer (and per q and k).
struct AttentionInputs {
  torch::Tensor cos, sin;  // (T, D)
  torch::Tensor masked;    // (T, P+T) bool: true where query i may not see key j
};

// A linear projection y = W x + b (HF's parameter names "weight", "bias") that can carry a LoRA
// adapter, registered as the submodules lora_A and lora_B, so that named_parameters() reads
// "...q_proj.lora_A.weight" as PEFT names it: y += (alpha / r) B A dropout(x).
struct ProjectionImpl : torch::nn::Module {
  ProjectionImpl(std::int64_t in, std::int64_t out, bool bias);
  torch::Tensor forward(const torch::Tensor& x);  // (..., in) -> (..., out)
  // Adds a fresh adapter (A as PyTorch initialises a Linear, B zero: the output is unchanged).
  void attachLora(std::int64_t r, double alpha, double dropout);
  bool hasLora() const { return !lora_A.is_empty(); }
  // W += scaling B A; the adapter is removed.
  void mergeLora();

  torch::Tensor weight;  // (out, in); may be kept in bfloat16 while frozen (cast to the input's dtype)
  torch::Tensor bias;    // (out) or undefined
  torch::nn::Linear lora_A{nullptr}, lora_B{nullptr};
  double loraScaling = 0.0, loraDropout = 0.0;
  bool loraEnabled = true;  // false: the base projection alone (the frozen reference of rho1)
};
TORCH_MODULE(Projection);

struct AttentionImpl : torch::nn::Module {
  AttentionImpl(const ModelConfig& c, const Rope* rope);
  // x (B, T, C) -> (B, T, C); appends this step's keys/values to cache slots when given.
  torch::Tensor forward(const torch::Tensor& x, const AttentionInputs& shared, torch::Tensor* cachedK, torch::Tensor* cachedV);
  Projection q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  RmsNorm q_norm{nullptr}, k_norm{nullptr};  // per head, before RoPE (Qwen3); empty otherwise
  std::int64_t heads, kvHeads, headDim;
  const Rope* rope;
  // Attention through at::scaled_dot_product_attention (its fused flash / memory-efficient kernels);
  // false: the explicit softmax(QK^T / sqrt(D)) V, kept only to compare the two.
  bool sdpa = true;
};
TORCH_MODULE(Attention);

struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(const ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& x);  // SwiGLU: down(silu(gate(x)) * up(x))
  Projection gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(Mlp);

struct DecoderLayerImpl : torch::nn::Module {
  DecoderLayerImpl(const ModelConfig& c, const Rope* rope);
  torch::Tensor forward(const torch::Tensor& x, const AttentionInputs& shared, torch::Tensor* cachedK, torch::Tensor* cachedV);
  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  Attention self_attn{nullptr};
  Mlp mlp{nullptr};
};
TORCH_MODULE(DecoderLayer);

struct DecoderImpl : torch::nn::Module {  // HF's "model"
  DecoderImpl(const ModelConfig& c, const Rope* rope);
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers;
  RmsNorm norm{nullptr};
};
TORCH_MODULE(Decoder);

struct CausalLmImpl : torch::nn::Module {
  explicit CausalLmImpl(ModelConfig config);
  // ids (B, T) int64 -> logits (B, T, V). With a cache, ids are the tokens after the cached ones and
  // the cache grows by T.
  torch::Tensor forward(const torch::Tensor& ids, KvCache* cache = nullptr);
  // Every layer's attention through scaled_dot_product_attention (the default) or the explicit path.
  void useSdpa(bool on);
  // Every projection named `module` ("q_proj", ...) of every layer.
  std::vector<ProjectionImpl*> projections(const std::string& module);

  ModelConfig config;
  // Activation checkpointing per decoder layer: in training with gradients on, a layer keeps only its
  // input and recomputes its activations in the backward pass (same loss and gradients, less memory).
  bool activationCheckpointing = false;
  std::unique_ptr<Rope> rope;
  Decoder model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // absent when embeddings are tied
};
TORCH_MODULE(CausalLm);

// LibTorch's intra-op threads, and a single-threaded OpenBLAS under them: OpenBLAS's own threads on top
// of LibTorch's oversubscribe the cores (measured: a tiny-model step 3.4x slower on 2 cores).
// `threads` <= 0 keeps LibTorch's default.
void setComputeThreads(int threads);

// "cpu", "cuda" or "auto"; "cuda" without a usable GPU is an error saying why.
torch::Device resolveDevice(const std::string& name);

// A safetensors tensor as a LibTorch tensor of its dtype over the mapped bytes (no copy): valid while
// its file stays open, to be copied into a parameter.
torch::Tensor tensorView(const safetensors::TensorView& t);

// Loads every parameter by its HF name from a checkpoint folder (model.safetensors or a sharded
// index); shapes must match, dtypes are converted. Throws cuset::Error naming the tensor otherwise.
void loadWeights(CausalLm& model, const std::filesystem::path& directory);
// Writes config.json and model.safetensors (float32 or bfloat16) into `directory`, atomically per file.
void saveCheckpoint(CausalLm& model, const std::filesystem::path& directory, torch::Dtype dtype = torch::kFloat32);

}  // namespace cuset
