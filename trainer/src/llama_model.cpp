#include "cuset/trainer/llama_model.hpp"

#include <ATen/autocast_mode.h>

#include <dlfcn.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/trainer/safetensors.hpp"

namespace cuset {
namespace {

torch::nn::Linear linear(std::int64_t in, std::int64_t out, bool bias) { return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias)); }

torch::Dtype torchDtype(safetensors::DType d) {
  switch (d) {
    case safetensors::DType::F64:
      return torch::kFloat64;
    case safetensors::DType::F32:
      return torch::kFloat32;
    case safetensors::DType::F16:
      return torch::kFloat16;
    case safetensors::DType::BF16:
      return torch::kBFloat16;
    case safetensors::DType::I64:
      return torch::kInt64;
    case safetensors::DType::I32:
      return torch::kInt32;
    case safetensors::DType::I16:
      return torch::kInt16;
    case safetensors::DType::I8:
      return torch::kInt8;
    case safetensors::DType::U8:
      return torch::kUInt8;
    case safetensors::DType::BOOL:
      return torch::kBool;
  }
  return torch::kFloat32;
}

}  // namespace

ProjectionImpl::ProjectionImpl(std::int64_t in, std::int64_t out, bool withBias) {
  weight = register_parameter("weight", torch::empty({out, in}));
  if (withBias) bias = register_parameter("bias", torch::empty({out}));
  // torch::nn::Linear's initialisation, drawn in the same order: the model's initial weights (and so
  // every seeded run) stay what they were when these projections were Linears.
  torch::NoGradGuard noGrad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (withBias) torch::nn::init::uniform_(bias, -1.0 / std::sqrt(static_cast<double>(in)), 1.0 / std::sqrt(static_cast<double>(in)));
}

torch::Tensor ProjectionImpl::forward(const torch::Tensor& x) {
  // A frozen base kept in bfloat16 under a float32 forward: cast for this product (autocast casts
  // both operands to its own dtype anyway).
  const bool autocast = at::autocast::is_autocast_enabled(at::kCUDA) || at::autocast::is_autocast_enabled(at::kCPU);
  const torch::Tensor w = autocast || weight.scalar_type() == x.scalar_type() ? weight : weight.to(x.scalar_type());
  const torch::Tensor b = !bias.defined() || autocast || bias.scalar_type() == x.scalar_type() ? bias : bias.to(x.scalar_type());
  torch::Tensor y = torch::nn::functional::linear(x, w, b);
  if (hasLora() && loraEnabled) {
    const torch::Tensor in = loraDropout > 0.0 && is_training() ? torch::dropout(x, loraDropout, true) : x;
    // The adapters stay float32 under a bfloat16 base: their product in their dtype, the sum in the base's.
    const bool cast = !autocast && in.scalar_type() != lora_A->weight.scalar_type();
    const torch::Tensor delta = lora_B(lora_A(cast ? in.to(lora_A->weight.scalar_type()) : in)) * loraScaling;
    y = y + (cast ? delta.to(y.scalar_type()) : delta);
  }
  return y;
}

void ProjectionImpl::attachLora(std::int64_t r, double alpha, double dropout) {
  lora_A = register_module("lora_A", torch::nn::Linear(torch::nn::LinearOptions(weight.size(1), r).bias(false)));
  lora_B = register_module("lora_B", torch::nn::Linear(torch::nn::LinearOptions(r, weight.size(0)).bias(false)));
  lora_A->to(weight.device());
  lora_B->to(weight.device());
  torch::NoGradGuard noGrad;
  lora_B->weight.zero_();  // A keeps Linear's kaiming-uniform initialisation, as PEFT's default
  loraScaling = alpha / static_cast<double>(r);
  loraDropout = dropout;
}

void ProjectionImpl::mergeLora() {
  if (!hasLora()) return;
  torch::NoGradGuard noGrad;
  const auto delta = torch::matmul(lora_B->weight.to(torch::kFloat32), lora_A->weight.to(torch::kFloat32)) * loraScaling;
  weight.copy_((weight.to(torch::kFloat32) + delta).to(weight.scalar_type()));
  unregister_module("lora_A");
  unregister_module("lora_B");
  lora_A = nullptr;
  lora_B = nullptr;
}

RmsNormImpl::RmsNormImpl(std::int64_t size, double eps_) : eps(eps_) { weight = register_parameter("weight", torch::ones({size})); }

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  // In float32 whatever the input dtype, as HF does, then back.
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + eps);
  return weight * normed.to(x.scalar_type());
}

namespace {

// theta^(-2i/D) for i < D/2, in float64.
torch::Tensor baseFrequencies(std::int64_t headDim, double theta) {
  return 1.0 / torch::pow(theta, torch::arange(0, headDim, 2, torch::kFloat64) / static_cast<double>(headDim));
}

// Llama 3.1's: wavelengths longer than original/low are stretched by `factor`, shorter than
// original/high kept, and those between blended smoothly.
torch::Tensor llama3Frequencies(const torch::Tensor& f, const RopeScaling& s) {
  const double original = static_cast<double>(*s.originalMaxPositions);
  const auto wavelength = 2.0 * M_PI / f;
  const auto scaled = torch::where(wavelength > original / s.lowFreqFactor, f / s.factor, f);
  const auto smooth = (original / wavelength - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
  const auto blended = (1.0 - smooth) * scaled / s.factor + smooth * scaled;
  const auto medium = (wavelength >= original / s.highFreqFactor).logical_and(wavelength <= original / s.lowFreqFactor);
  return torch::where(medium, blended, scaled);
}

double yarnMscale(double scale, double mscale) { return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// YaRN: dimensions that rotate more than beta_fast times over the original context keep their
// frequency, fewer than beta_slow times are interpolated by `factor`, a linear ramp between; returns
// the frequencies and the attention factor cos and sin are scaled by.
std::pair<torch::Tensor, double> yarnFrequencies(std::int64_t headDim, double theta, std::int64_t originalMax, const RopeScaling& s) {
  const double D = static_cast<double>(headDim), original = static_cast<double>(originalMax);
  auto correctionDim = [&](double rotations) { return D * std::log(original / (rotations * 2.0 * M_PI)) / (2.0 * std::log(theta)); };
  const double low = std::max(std::floor(correctionDim(s.betaFast)), 0.0);
  double high = std::min(std::ceil(correctionDim(s.betaSlow)), D - 1.0);
  if (low == high) high += 0.001;
  const auto ramp = ((torch::arange(headDim / 2, torch::kFloat64) - low) / (high - low)).clamp(0.0, 1.0);
  const auto extrapolation = baseFrequencies(headDim, theta);
  const auto keep = 1.0 - ramp;
  const auto f = extrapolation / s.factor * (1.0 - keep) + extrapolation * keep;
  double attention = 0.0;
  if (s.attentionFactor)
    attention = *s.attentionFactor;
  else if (s.mscale && s.mscaleAllDim && *s.mscale != 0.0 && *s.mscaleAllDim != 0.0)
    attention = yarnMscale(s.factor, *s.mscale) / yarnMscale(s.factor, *s.mscaleAllDim);
  else
    attention = yarnMscale(s.factor, 1.0);
  return {f, attention};
}

}  // namespace

Rope::Rope(std::int64_t headDim, double theta) : headDim_(headDim), theta_(theta) { invFreq_ = baseFrequencies(headDim, theta).to(torch::kFloat32); }

Rope::Rope(const ModelConfig& c) : Rope(c.headDim(), c.ropeTheta) {
  const RopeScaling& s = c.ropeScaling;
  const std::int64_t original = s.originalMaxPositions.value_or(c.maxPositions);
  torch::Tensor f = baseFrequencies(headDim_, theta_);
  switch (s.type) {
    case RopeScaling::Type::none:
      break;
    case RopeScaling::Type::linear:
      f = f / s.factor;
      break;
    case RopeScaling::Type::dynamic:
      dynamicFrom_ = original;
      dynamicFactor_ = s.factor;
      break;
    case RopeScaling::Type::llama3:
      f = llama3Frequencies(f, s);
      break;
    case RopeScaling::Type::yarn:
      std::tie(f, attentionScaling_) = yarnFrequencies(headDim_, theta_, original, s);
      break;
  }
  invFreq_ = f.to(torch::kFloat32);
}

std::pair<torch::Tensor, torch::Tensor> Rope::cosAndSin(std::int64_t offset, std::int64_t T, const torch::Tensor& like) const {
  torch::Tensor invFreq = invFreq_;
  if (dynamicFrom_ > 0 && offset + T > dynamicFrom_) {
    // Dynamic NTK as transformers computes it for a sequence of offset+T positions: the base grows so
    // that the longest wavelength covers the sequence. Stateless: a shorter forward after a longer one
    // uses its own length (transformers keeps the longest seen until it drops below the original).
    const double length = static_cast<double>(offset + T), D = static_cast<double>(headDim_);
    const double base = theta_ * std::pow(dynamicFactor_ * length / static_cast<double>(dynamicFrom_) - (dynamicFactor_ - 1.0), D / (D - 2.0));
    invFreq = baseFrequencies(headDim_, base).to(torch::kFloat32);
  }
  const auto positions = torch::arange(offset, offset + T, torch::TensorOptions().dtype(torch::kFloat32).device(like.device()));
  const auto freqs = torch::outer(positions, invFreq.to(like.device()));  // (T, D/2)
  const auto angles = torch::cat({freqs, freqs}, -1);                     // (T, D)
  auto cos = angles.cos(), sin = angles.sin();
  if (attentionScaling_ != 1.0) {
    cos = cos * attentionScaling_;
    sin = sin * attentionScaling_;
  }
  return {cos.to(like.scalar_type()), sin.to(like.scalar_type())};
}

torch::Tensor Rope::apply(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const std::int64_t half = x.size(3) / 2;
  const auto rotated = torch::cat({-x.narrow(3, half, half), x.narrow(3, 0, half)}, -1);  // rotate_half
  return x * cos + rotated * sin;
}

torch::Tensor Rope::apply(const torch::Tensor& x, std::int64_t offset) const {
  const auto [cos, sin] = cosAndSin(offset, x.size(2), x);
  return apply(x, cos, sin);
}

AttentionImpl::AttentionImpl(const ModelConfig& c, const Rope* rope_) : heads(c.numHeads), kvHeads(c.numKvHeads), headDim(c.headDim()), rope(rope_) {
  q_proj = register_module("q_proj", Projection(c.hiddenSize, heads * headDim, c.attentionBias));
  k_proj = register_module("k_proj", Projection(c.hiddenSize, kvHeads * headDim, c.attentionBias));
  v_proj = register_module("v_proj", Projection(c.hiddenSize, kvHeads * headDim, c.attentionBias));
  o_proj = register_module("o_proj", Projection(heads * headDim, c.hiddenSize, false));
  if (c.qkNorm) {
    q_norm = register_module("q_norm", RmsNorm(headDim, c.rmsNormEps));
    k_norm = register_module("k_norm", RmsNorm(headDim, c.rmsNormEps));
  }
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const AttentionInputs& shared, torch::Tensor* cachedK, torch::Tensor* cachedV) {
  const std::int64_t B = x.size(0), T = x.size(1);
  auto q = q_proj(x).view({B, T, heads, headDim});  // (B, T, H, D)
  auto k = k_proj(x).view({B, T, kvHeads, headDim});
  if (!q_norm.is_empty()) {
    q = q_norm(q);
    k = k_norm(k);
  }
  // The softmax scale goes on q (B, H, T, D), not on the scores (B, H, T, P+T): fewer elements
  // (scaled_dot_product_attention applies the same 1/sqrt(D) itself).
  if (!sdpa) q = q * (1.0 / std::sqrt(static_cast<double>(headDim)));
  q = q.transpose(1, 2);                                              // (B, H, T, D)
  k = k.transpose(1, 2);                                              // (B, Hkv, T, D)
  auto v = v_proj(x).view({B, T, kvHeads, headDim}).transpose(1, 2);  // (B, Hkv, T, D)
  q = Rope::apply(q, shared.cos, shared.sin);
  k = Rope::apply(k, shared.cos, shared.sin);
  if (cachedK) {
    if (cachedK->defined() && cachedK->size(2) > 0) {
      k = torch::cat({*cachedK, k}, 2);  // (B, Hkv, P+T, D)
      v = torch::cat({*cachedV, v}, 2);
    }
    *cachedK = k;
    *cachedV = v;
  }
  if (kvHeads != heads) {  // grouped-query attention: each kv head serves H/Hkv query heads
    k = k.repeat_interleave(heads / kvHeads, 1);
    v = v.repeat_interleave(heads / kvHeads, 1);
  }
  if (sdpa) {
    // Without a cache (training, a prompt) the causal flag, which lets the fused kernels skip masked
    // blocks; with cached keys the explicit mask, since the flag aligns queries to the first key.
    const std::int64_t P = k.size(2) - T;
    torch::Tensor out;
    if (P == 0)
      out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
    else if (T == 1)
      out = at::scaled_dot_product_attention(q, k, v);
    else
      out = at::scaled_dot_product_attention(q, k, v, shared.masked.logical_not());
    return o_proj(out.transpose(1, 2).reshape({B, T, heads * headDim}));
  }
  auto scores = torch::matmul(q, k.transpose(2, 3));  // (B, H, T, P+T)
  // In place: the matmul's result is not needed for its own backward.
  scores.masked_fill_(shared.masked, -std::numeric_limits<float>::infinity());
  const auto probs = torch::softmax(scores, -1, torch::kFloat32).to(q.scalar_type());
  const auto out = torch::matmul(probs, v).transpose(1, 2).reshape({B, T, heads * headDim});  // (B, T, H*D)
  return o_proj(out);
}

MlpImpl::MlpImpl(const ModelConfig& c) {
  gate_proj = register_module("gate_proj", Projection(c.hiddenSize, c.intermediateSize, false));
  up_proj = register_module("up_proj", Projection(c.hiddenSize, c.intermediateSize, false));
  down_proj = register_module("down_proj", Projection(c.intermediateSize, c.hiddenSize, false));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) { return down_proj(torch::silu(gate_proj(x)) * up_proj(x)); }

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& c, const Rope* rope) {
  input_layernorm = register_module("input_layernorm", RmsNorm(c.hiddenSize, c.rmsNormEps));
  self_attn = register_module("self_attn", Attention(c, rope));
  post_attention_layernorm = register_module("post_attention_layernorm", RmsNorm(c.hiddenSize, c.rmsNormEps));
  mlp = register_module("mlp", Mlp(c));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const AttentionInputs& shared, torch::Tensor* cachedK, torch::Tensor* cachedV) {
  const auto h = x + self_attn->forward(input_layernorm(x), shared, cachedK, cachedV);
  return h + mlp(post_attention_layernorm(h));
}

DecoderImpl::DecoderImpl(const ModelConfig& c, const Rope* rope) {
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(c.vocabSize, c.hiddenSize));
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < c.numLayers; ++i) layers->push_back(DecoderLayer(c, rope));
  norm = register_module("norm", RmsNorm(c.hiddenSize, c.rmsNormEps));
}

CausalLmImpl::CausalLmImpl(ModelConfig c) : config(std::move(c)), rope(std::make_unique<Rope>(config)) {
  model = register_module("model", Decoder(config, rope.get()));
  if (!config.tieWordEmbeddings) lm_head = register_module("lm_head", linear(config.hiddenSize, config.vocabSize, false));
  // HF's initialisation: normal(0, 0.02) for linear and embedding weights, zeros for biases.
  torch::NoGradGuard noGrad;
  for (auto& p : named_parameters()) {
    if (p.key().find("layernorm") != std::string::npos || p.key().find("norm.weight") != std::string::npos) continue;
    if (p.key().ends_with(".bias"))
      p.value().zero_();
    else
      p.value().normal_(0.0, 0.02);
  }
}

namespace {

// What autocast does at the moment of a forward, so the backward's recomputation does the same (the
// backward itself runs outside the caller's autocast scope).
struct AutocastState {
  bool cpu = false, gpu = false;
  at::ScalarType cpuType = at::kBFloat16, gpuType = at::kHalf;
  static AutocastState current() {
    return {at::autocast::is_autocast_enabled(at::kCPU), at::autocast::is_autocast_enabled(at::kCUDA), at::autocast::get_autocast_dtype(at::kCPU),
            at::autocast::get_autocast_dtype(at::kCUDA)};
  }
  void apply() const {
    at::autocast::set_autocast_enabled(at::kCPU, cpu);
    at::autocast::set_autocast_enabled(at::kCUDA, gpu);
    at::autocast::set_autocast_dtype(at::kCPU, cpuType);
    at::autocast::set_autocast_dtype(at::kCUDA, gpuType);
  }
};

// One decoder layer whose forward keeps only its input (and the shared rotary tables and mask) and
// whose backward runs the layer again with gradients on, under the forward's autocast state and random
// state, then back-propagates through that. Parameter gradients are accumulated into .grad directly:
// the parameters are not inputs of the function, so autograd would not route theirs.
struct CheckpointedLayer : torch::autograd::Function<CheckpointedLayer> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, DecoderLayerImpl* layer,
                               const AttentionInputs* shared) {
    ctx->saved_data["layer"] = reinterpret_cast<std::int64_t>(layer);
    ctx->saved_data["cos"] = shared->cos;
    ctx->saved_data["sin"] = shared->sin;
    ctx->saved_data["masked"] = shared->masked;
    const AutocastState autocast = AutocastState::current();
    ctx->saved_data["autocast"] = std::vector<std::int64_t>{autocast.cpu, autocast.gpu, static_cast<std::int64_t>(autocast.cpuType),
                                                            static_cast<std::int64_t>(autocast.gpuType)};
    ctx->saved_data["rng"] = at::globalContext().defaultGenerator(x.device()).get_state();
    ctx->save_for_backward({x});
    return layer->forward(x, *shared, nullptr, nullptr);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list outputGrads) {
    auto* layer = reinterpret_cast<DecoderLayerImpl*>(ctx->saved_data["layer"].toInt());
    const AttentionInputs shared{ctx->saved_data["cos"].toTensor(), ctx->saved_data["sin"].toTensor(), ctx->saved_data["masked"].toTensor()};
    const torch::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    const auto a = ctx->saved_data["autocast"].toIntVector();
    const AutocastState saved{a[0] != 0, a[1] != 0, static_cast<at::ScalarType>(a[2]), static_cast<at::ScalarType>(a[3])};
    const AutocastState outer = AutocastState::current();
    at::Generator generator = at::globalContext().defaultGenerator(x.device());
    const torch::Tensor rngAfter = generator.get_state();
    torch::Tensor y;
    {
      torch::AutoGradMode gradients(true);
      saved.apply();
      generator.set_state(ctx->saved_data["rng"].toTensor());
      y = layer->forward(x, shared, nullptr, nullptr);
      outer.apply();
      generator.set_state(rngAfter);
    }
    std::vector<torch::Tensor> inputs = {x};
    std::vector<torch::Tensor> parameters;
    for (const auto& p : layer->parameters()) {
      if (p.requires_grad()) parameters.push_back(p);
    }
    inputs.insert(inputs.end(), parameters.begin(), parameters.end());
    const auto grads = torch::autograd::grad({y}, inputs, {outputGrads[0]}, /*retain_graph=*/false, /*create_graph=*/false, /*allow_unused=*/true);
    torch::NoGradGuard noGrad;
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const torch::Tensor& g = grads[i + 1];
      if (!g.defined()) continue;
      torch::Tensor& grad = parameters[i].mutable_grad();
      if (grad.defined())
        grad.add_(g);
      else
        grad = g.clone();
    }
    return {grads[0], torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor CausalLmImpl::forward(const torch::Tensor& ids, KvCache* cache) {
  if (cache && cache->keys.empty()) {
    cache->keys.resize(static_cast<std::size_t>(config.numLayers));
    cache->values.resize(static_cast<std::size_t>(config.numLayers));
  }
  auto x = model->embed_tokens(ids);  // (B, T, C)
  const std::int64_t T = ids.size(1);
  const std::int64_t P = cache && !cache->keys.empty() && cache->keys[0].defined() ? cache->keys[0].size(2) : 0;
  AttentionInputs shared;
  std::tie(shared.cos, shared.sin) = rope->cosAndSin(P, T, x);
  // Query i (absolute position P+i) sees keys 0..P+i.
  shared.masked = torch::ones({T, P + T}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).triu(P + 1);
  const bool checkpointed = activationCheckpointing && is_training() && torch::GradMode::is_enabled() && cache == nullptr;
  for (std::size_t i = 0; i < model->layers->size(); ++i) {
    auto layer = model->layers[i]->as<DecoderLayerImpl>();
    if (checkpointed)
      x = CheckpointedLayer::apply(x, layer, &shared);
    else
      x = layer->forward(x, shared, cache ? &cache->keys[i] : nullptr, cache ? &cache->values[i] : nullptr);
  }
  x = model->norm(x);
  return config.tieWordEmbeddings ? torch::matmul(x, model->embed_tokens->weight.t()) : lm_head(x);  // (B, T, V)
}

std::vector<ProjectionImpl*> CausalLmImpl::projections(const std::string& module) {
  std::vector<ProjectionImpl*> out;
  for (std::size_t i = 0; i < model->layers->size(); ++i) {
    auto* layer = model->layers[i]->as<DecoderLayerImpl>();
    if (module == "q_proj")
      out.push_back(layer->self_attn->q_proj.get());
    else if (module == "k_proj")
      out.push_back(layer->self_attn->k_proj.get());
    else if (module == "v_proj")
      out.push_back(layer->self_attn->v_proj.get());
    else if (module == "o_proj")
      out.push_back(layer->self_attn->o_proj.get());
    else if (module == "gate_proj")
      out.push_back(layer->mlp->gate_proj.get());
    else if (module == "up_proj")
      out.push_back(layer->mlp->up_proj.get());
    else if (module == "down_proj")
      out.push_back(layer->mlp->down_proj.get());
  }
  return out;
}

void CausalLmImpl::useSdpa(bool on) {
  for (std::size_t i = 0; i < model->layers->size(); ++i) model->layers[i]->as<DecoderLayerImpl>()->self_attn->sdpa = on;
}

void setComputeThreads(int threads) {
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
  if (threads > 0) torch::set_num_threads(threads);
}

torch::Device resolveDevice(const std::string& name) {
  const bool cuda = torch::cuda::is_available();
  if (name == "cpu" || (name == "auto" && !cuda)) return torch::kCPU;
  if (!cuda) throw makeError("device 'cuda' requested, but this LibTorch has no CUDA or no GPU is visible (LibTorch {})", TORCH_VERSION);
  return torch::kCUDA;
}

torch::Tensor tensorView(const safetensors::TensorView& t) {
  return torch::from_blob(const_cast<std::byte*>(t.data.data()), t.shape, torchDtype(t.dtype));
}

void loadWeights(CausalLm& model, const std::filesystem::path& directory) {
  const auto checkpoint = safetensors::Checkpoint::open(directory);
  torch::NoGradGuard noGrad;
  for (auto& p : model->named_parameters()) {
    const safetensors::TensorView* t = checkpoint.find(p.key());
    if (!t) throw makeError("{}: checkpoint has no tensor '{}'", directory.string(), p.key());
    const std::vector<std::int64_t> expected(p.value().sizes().begin(), p.value().sizes().end());
    if (t->shape != expected) {
      throw makeError("{}: tensor '{}' has shape [{}] but the model (from config.json) needs [{}]", directory.string(), p.key(),
                      fmt::join(t->shape, ", "), fmt::join(expected, ", "));
    }
    p.value().copy_(tensorView(*t).to(p.value().device(), p.value().scalar_type()));
  }
}

void saveCheckpoint(CausalLm& model, const std::filesystem::path& directory, torch::Dtype dtype) {
  std::filesystem::create_directories(directory);
  std::vector<torch::Tensor> keepAlive;
  std::vector<safetensors::TensorToWrite> tensors;
  for (const auto& p : model->named_parameters()) {
    keepAlive.push_back(p.value().detach().to(torch::kCPU, dtype).contiguous());
    const auto& t = keepAlive.back();
    tensors.push_back({p.key(), dtype == torch::kBFloat16 ? safetensors::DType::BF16 : safetensors::DType::F32,
                       std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()),
                       std::span<const std::byte>(static_cast<const std::byte*>(t.data_ptr()), t.nbytes())});
  }
  safetensors::write(directory / "model.safetensors", tensors, {{"format", "pt"}});
  nlohmann::json config = model->config.toJson();
  config["torch_dtype"] = dtype == torch::kBFloat16 ? "bfloat16" : "float32";
  writeJsonFileAtomic(directory / "config.json", config);
}

}  // namespace cuset
