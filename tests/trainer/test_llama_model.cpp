// The decoder against its own definitions: KV-cache decoding equals a full forward, checkpoints
// round-trip bitwise, gradients reach every parameter, RoPE is the closed-form rotation.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iostream>
#include <map>

#include <ATen/autocast_mode.h>

#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/safetensors.hpp"
#include "python_reference.hpp"
#include "reference_logits.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

ModelConfig tinyConfig(bool tied = false, const std::string& type = "qwen2") {
  return ModelConfig::fromJson({{"model_type", type},
                                {"vocab_size", 61},
                                {"hidden_size", 32},
                                {"intermediate_size", 48},
                                {"num_hidden_layers", 2},
                                {"num_attention_heads", 4},
                                {"num_key_value_heads", 2},
                                {"rope_theta", 10000.0},
                                {"rms_norm_eps", 1e-6},
                                {"tie_word_embeddings", tied}},
                               "tiny");
}

CausalLm tinyModel(bool tied = false) {
  torch::manual_seed(3);
  CausalLm m(tinyConfig(tied));
  m->eval();
  return m;
}

// One training step's loss (next-token cross entropy on ids[:, :-1] -> ids[:, 1:]) and every parameter's
// gradient, under bfloat16 autocast on the CPU when asked (as `precision: bf16` trains there).
struct LossAndGradients {
  double loss = 0;
  std::map<std::string, torch::Tensor> gradients;
  torch::ScalarType logitsType = torch::kFloat32;
};

LossAndGradients lossAndGradients(CausalLm& m, const torch::Tensor& ids, bool bf16 = false) {
  m->zero_grad();
  const std::int64_t T = ids.size(1) - 1;
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, bf16);
  const auto logits = m->forward(ids.narrow(1, 0, T));
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  const auto loss =
      torch::nn::functional::cross_entropy(logits.to(torch::kFloat32).reshape({-1, logits.size(-1)}), ids.narrow(1, 1, T).reshape({-1}));
  loss.backward();
  LossAndGradients out{loss.item<double>(), {}, logits.scalar_type()};
  for (const auto& p : m->named_parameters()) out.gradients[p.key()] = p.value().grad().clone();
  return out;
}

// Every parameter has a non-zero gradient in `a`, and `b`'s equals it within the tolerances.
void expectSameGradients(const LossAndGradients& a, const LossAndGradients& b, double rtol, double atol) {
  ASSERT_EQ(a.gradients.size(), b.gradients.size());
  for (const auto& [name, g] : a.gradients) {
    const torch::Tensor& other = b.gradients.at(name);
    ASSERT_TRUE(other.defined()) << name;
    EXPECT_GT(g.abs().max().item<double>(), 0.0) << name;
    EXPECT_TRUE(torch::allclose(g, other, rtol, atol)) << name << ": max difference " << (g - other).abs().max().item<double>();
  }
}

TEST(ModelConfig, ParsesAndValidates) {
  const ModelConfig c = tinyConfig();
  EXPECT_EQ(c.headDim(), 8);
  EXPECT_TRUE(c.attentionBias);  // Qwen2 has q/k/v biases
  EXPECT_FALSE(tinyConfig(false, "llama").attentionBias);
  auto bad = c.toJson();
  bad["num_key_value_heads"] = 3;
  CUSET_EXPECT_THROW_WITH(ModelConfig::fromJson(bad, "config.json"), "config.json", "not a multiple of num_key_value_heads");
  bad = c.toJson();
  bad.erase("hidden_size");
  CUSET_EXPECT_THROW_WITH(ModelConfig::fromJson(bad, "config.json"), "no 'hidden_size'");
  bad = c.toJson();
  bad["model_type"] = "gpt2";
  CUSET_EXPECT_THROW_WITH(ModelConfig::fromJson(bad, "config.json"), "model_type 'gpt2' is not supported");
}

TEST(CausalLm, IncrementalDecodingWithTheKvCacheMatchesAFullForward) {
  auto m = tinyModel();
  torch::NoGradGuard noGrad;
  const auto ids = torch::randint(0, 61, {2, 9}, torch::kInt64);
  const auto full = m->forward(ids);  // (2, 9, 61)
  KvCache cache;
  std::vector<torch::Tensor> steps = {m->forward(ids.narrow(1, 0, 5), &cache)};
  for (int t = 5; t < 9; ++t) steps.push_back(m->forward(ids.narrow(1, t, 1), &cache));
  EXPECT_EQ(cache.length(), 9);
  const auto incremental = torch::cat(steps, 1);
  EXPECT_TRUE(torch::allclose(full, incremental, 1e-5, 1e-5)) << (full - incremental).abs().max().item<float>();
}

TEST(CausalLm, RunsInBfloat16OnTheCpu) {
  auto m = tinyModel();
  torch::NoGradGuard noGrad;
  const auto ids = torch::randint(0, 61, {2, 8}, torch::kInt64);
  const auto reference = m->forward(ids);
  m->to(torch::kBFloat16);
  KvCache cache;
  const auto logits = m->forward(ids, &cache);
  EXPECT_EQ(logits.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(cache.keys[0].scalar_type(), torch::kBFloat16);
  // bf16 keeps 8 significant bits: agreement to a few percent of the logits' scale.
  const double scale = reference.abs().max().item<double>();
  EXPECT_LT((logits.to(torch::kFloat32) - reference).abs().max().item<double>(), 0.05 * scale + 1e-3);
}

TEST(CausalLm, OnCudaMatchesTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA LibTorch or no GPU visible";
  auto m = tinyModel();
  torch::NoGradGuard noGrad;
  const auto ids = torch::randint(0, 61, {2, 8}, torch::kInt64);
  const auto cpu = m->forward(ids);
  m->to(torch::kCUDA);
  KvCache cache;
  const auto gpu = m->forward(ids.to(torch::kCUDA), &cache).to(torch::kCPU);
  EXPECT_TRUE(torch::allclose(cpu, gpu, 1e-4, 1e-4));
}

TEST(CausalLm, AskingForCudaWithoutOneSaysWhy) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is visible";
  CUSET_EXPECT_THROW_WITH(resolveDevice("cuda"), "device 'cuda' requested", "no CUDA");
  EXPECT_EQ(resolveDevice("auto"), torch::Device(torch::kCPU));
}

TEST(CausalLm, CausalMaskMakesEarlyLogitsIgnoreLaterTokens) {
  auto m = tinyModel();
  torch::NoGradGuard noGrad;
  auto ids = torch::randint(0, 61, {1, 6}, torch::kInt64);
  const auto a = m->forward(ids);
  ids[0][5] = (ids[0][5].item<std::int64_t>() + 1) % 61;
  const auto b = m->forward(ids);
  EXPECT_TRUE(torch::equal(a.narrow(1, 0, 5), b.narrow(1, 0, 5)));
  EXPECT_FALSE(torch::equal(a.narrow(1, 5, 1), b.narrow(1, 5, 1)));
}

TEST(CausalLm, CheckpointRoundTripsBitwiseWithHfNames) {
  test::TempDir dir;
  for (bool tied : {false, true}) {
    auto m = tinyModel(tied);
    saveCheckpoint(m, dir / (tied ? "tied" : "untied"));
    torch::manual_seed(99);
    CausalLm other(tinyConfig(tied));
    loadWeights(other, dir / (tied ? "tied" : "untied"));
    for (const auto& p : m->named_parameters()) {
      EXPECT_TRUE(torch::equal(p.value(), other->named_parameters()[p.key()])) << p.key();
    }
    const auto config = nlohmann::json::parse(test::readText(dir / (tied ? "tied" : "untied") / "config.json"));
    EXPECT_EQ(config["architectures"][0], "Qwen2ForCausalLM");
  }
  const auto names = safetensors::Checkpoint::open(dir / "untied").names();
  for (const char* hf : {"model.embed_tokens.weight", "model.layers.1.self_attn.q_proj.bias", "model.layers.0.mlp.gate_proj.weight",
                         "model.layers.0.post_attention_layernorm.weight", "model.norm.weight", "lm_head.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), hf), names.end()) << hf;
  }
  const auto tiedNames = safetensors::Checkpoint::open(dir / "tied").names();
  EXPECT_EQ(std::find(tiedNames.begin(), tiedNames.end(), "lm_head.weight"), tiedNames.end());
}

TEST(CausalLm, LoadingAMismatchedCheckpointNamesTheTensor) {
  test::TempDir dir;
  auto m = tinyModel();
  saveCheckpoint(m, dir.path());
  ModelConfig bigger = tinyConfig();
  bigger.intermediateSize = 64;
  CausalLm other(bigger);
  CUSET_EXPECT_THROW_WITH(loadWeights(other, dir.path()), "mlp.gate_proj.weight", "needs [64, 32]");
}

TEST(CausalLm, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  CausalLm m(tinyConfig());
  const auto ids = torch::randint(0, 61, {2, 7}, torch::kInt64);
  const auto logits = m->forward(ids.narrow(1, 0, 6));
  const auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, 61}), ids.narrow(1, 1, 6).reshape({-1}));
  loss.backward();
  for (const auto& p : m->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}

using test::runCommand;

bool pythonTorchAvailable() { return test::pythonHas("torch"); }

// Randomises `m`'s weights well away from the initialisation (norm gains and biases too, so logits are
// O(1) and any convention mismatch shows), saves it under `where`, and compares its logits for seven
// tokens with tests/trainer/reference/llama_forward.py's.
void expectAgreesWithPython(CausalLm& m, const std::filesystem::path& where, const std::string& label) {
  SCOPED_TRACE(label);
  {
    torch::NoGradGuard noGrad;
    for (auto& p : m->parameters()) p.normal_(0.0, 0.3);
  }
  saveCheckpoint(m, where);
  const std::vector<std::int64_t> ids = {3, 17, 42, 0, 60, 5, 9};
  std::string command = std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/trainer/reference/llama_forward.py " + where.string();
  for (auto id : ids) command += " " + std::to_string(id);
  int status = 0;
  const std::string out = runCommand(command + " 2>&1", status);
  ASSERT_EQ(status, 0) << out;
  const auto reference = nlohmann::json::parse(out);
  torch::NoGradGuard noGrad;
  const auto logits = m->forward(torch::tensor(ids).unsqueeze(0))[0];  // (T, V)
  ASSERT_EQ(reference.size(), ids.size());
  double worst = 0, largest = 0;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    for (std::int64_t v = 0; v < 61; ++v) {
      const double want = reference[t][static_cast<std::size_t>(v)].get<double>();
      largest = std::max(largest, std::abs(want));
      worst = std::max(worst, std::abs(want - logits[static_cast<std::int64_t>(t)][v].item<double>()) / std::max(1.0, std::abs(want)));
    }
  }
  EXPECT_GT(largest, 0.5);  // a meaningful comparison, not of near-zero logits
  EXPECT_LT(worst, 1e-4);
}

TEST(CausalLm, AgreesWithAnIndependentPythonImplementation) {
  if (!pythonTorchAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no torch (scripts/install-deps.sh makes it)";
  test::TempDir dir;
  for (bool tied : {false, true}) {
    auto m = tinyModel(tied);
    expectAgreesWithPython(m, dir / (tied ? "tied" : "untied"), tied ? "tied" : "untied");
  }
}

// Tiny random configs shaped as each family's config.json is (the fields those files carry, scaled
// down; rope_scaling with an original context short enough that a 7-token forward spans every regime).
std::vector<std::pair<std::string, nlohmann::json>> familyConfigs() {
  const nlohmann::json base = {{"vocab_size", 61},
                               {"hidden_size", 32},
                               {"intermediate_size", 48},
                               {"num_hidden_layers", 2},
                               {"num_attention_heads", 4},
                               {"num_key_value_heads", 2},
                               {"rms_norm_eps", 1e-6},
                               {"hidden_act", "silu"},
                               {"initializer_range", 0.02},
                               {"bos_token_id", 1},
                               {"eos_token_id", 2},
                               {"torch_dtype", "bfloat16"},
                               {"transformers_version", "4.51.0"},
                               {"use_cache", true}};
  auto with = [&](nlohmann::json extra) {
    nlohmann::json j = base;
    j.update(extra);
    return j;
  };
  return {
      {"llama-3.1", with({{"model_type", "llama"},
                          {"rope_theta", 500000.0},
                          {"max_position_embeddings", 512},
                          {"mlp_bias", false},
                          {"attention_bias", false},
                          {"attention_dropout", 0.0},
                          {"pretraining_tp", 1},
                          {"rope_scaling",
                           {{"rope_type", "llama3"},
                            {"factor", 8.0},
                            {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0},
                            {"original_max_position_embeddings", 64}}}})},
      {"llama-3.2", with({{"model_type", "llama"},
                          {"rope_theta", 500000.0},
                          {"head_dim", 8},
                          {"tie_word_embeddings", true},
                          {"rope_scaling",
                           {{"rope_type", "llama3"},
                            {"factor", 32.0},
                            {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0},
                            {"original_max_position_embeddings", 64}}}})},
      {"deepseek-coder", with({{"model_type", "llama"},
                               {"rope_theta", 100000.0},
                               {"max_position_embeddings", 16384},
                               {"rope_scaling", {{"type", "linear"}, {"factor", 4.0}}}})},
      {"dynamic-ntk", with({{"model_type", "llama"},
                            {"rope_theta", 10000.0},
                            {"max_position_embeddings", 4},
                            {"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}}})},
      {"qwen2.5-coder-yarn", with({{"model_type", "qwen2"},
                                   {"rope_theta", 1000000.0},
                                   {"max_position_embeddings", 256},
                                   {"use_sliding_window", false},
                                   {"sliding_window", 131072},
                                   {"max_window_layers", 2},
                                   {"rope_scaling", {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 64}}}})},
      {"yarn-mscale", with({{"model_type", "llama"},
                            {"rope_theta", 10000.0},
                            {"rope_scaling",
                             {{"rope_type", "yarn"},
                              {"factor", 8.0},
                              {"original_max_position_embeddings", 16},
                              {"beta_fast", 16},
                              {"beta_slow", 2},
                              {"mscale", 0.707},
                              {"mscale_all_dim", 1.0}}}})},
      {"mistral",
       with(
           {{"model_type", "mistral"}, {"rope_theta", 1000000.0}, {"head_dim", 8}, {"max_position_embeddings", 32768}, {"sliding_window", nullptr}})},
      {"qwen3", with({{"model_type", "qwen3"},
                      {"rope_theta", 1000000.0},
                      {"head_dim", 16},
                      {"attention_bias", false},
                      {"max_position_embeddings", 40960},
                      {"use_sliding_window", false},
                      {"sliding_window", nullptr},
                      {"max_window_layers", 2},
                      {"rope_scaling", nullptr}})},
  };
}

TEST(CausalLm, EachFamilyAgreesWithAnIndependentPythonImplementation) {
  if (!pythonTorchAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no torch (scripts/install-deps.sh makes it)";
  test::TempDir dir;
  for (const auto& [family, json] : familyConfigs()) {
    torch::manual_seed(11);
    CausalLm m(ModelConfig::fromJson(json, family));
    m->eval();
    expectAgreesWithPython(m, dir / family, family);
  }
}

// Hugging Face transformers itself as the reference (issue #51): models it makes, with its own random
// weights, give its logits here, and checkpoints saved here give these logits there. Lengths past
// original_max_position_embeddings (64 in the scaled configs) exercise every rope_scaling regime.
bool transformersAvailable() { return test::pythonHas("transformers"); }

const std::vector<std::int64_t> kParityLengths = {7, 80};

std::vector<std::int64_t> parityIds() {
  std::vector<std::int64_t> ids;
  for (std::int64_t i = 0; i < kParityLengths.back(); ++i) ids.push_back((i * 37 + 11) % 61);
  return ids;
}

nlohmann::json transformersLogits(const std::string& mode, const std::filesystem::path& root, const std::vector<std::string>& args) {
  nlohmann::json spec = {{"families", nlohmann::json::object()}, {"lengths", kParityLengths}, {"ids", parityIds()}};
  for (auto [family, json] : familyConfigs()) {
    json.erase("transformers_version");
    json.erase("torch_dtype");
    spec["families"][family] = json;
  }
  test::writeText(root / "spec.json", spec.dump());
  std::string command = "transformers_logits.py " + mode + " " + (root / "spec.json").string();
  for (const auto& a : args) command += " " + a;
  int status = 0;
  const std::string out = test::runReference(command, (root / "stderr.txt").string(), status);
  EXPECT_EQ(status, 0) << out << test::readText(root / "stderr.txt");
  return status == 0 ? nlohmann::json::parse(out) : nlohmann::json::object();
}

// The largest |transformers - here| over every position and vocabulary entry of every length, with
// the largest |logit| (the comparison means something only when logits are O(1)).
std::pair<double, double> logitDifference(CausalLm& m, const nlohmann::json& want) {
  torch::NoGradGuard noGrad;
  const auto ids = parityIds();
  double worst = 0, largest = 0;
  for (const std::int64_t n : kParityLengths) {
    const auto logits = m->forward(torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.begin() + n)).unsqueeze(0))[0];
    const auto& rows = want.at(std::to_string(n));
    worst = std::max(worst, test::maxLogitDifference(logits, rows));
    largest = std::max(largest, test::referenceLogits(rows).abs().max().item<double>());
  }
  return {worst, largest};
}

// One training step's loss and gradient norm on transformers' batch, and 32 greedy tokens decoded with
// the KV cache (as generation decodes) against generate().
void expectSameTrainingStepAndGreedyTokens(CausalLm& m, const nlohmann::json& want) {
  const auto ids = parityIds();
  const auto batch = torch::stack({torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.begin() + 16)),
                                   torch::tensor(std::vector<std::int64_t>(ids.begin() + 16, ids.begin() + 32))});
  m->zero_grad();
  const auto logits = m->forward(batch);
  const auto loss = torch::nn::functional::cross_entropy(logits.narrow(1, 0, 15).reshape({-1, logits.size(2)}), batch.narrow(1, 1, 15).reshape({-1}));
  loss.backward();
  double squares = 0;
  for (const auto& p : m->parameters()) {
    if (p.grad().defined()) squares += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
  }
  m->zero_grad();
  const double gradNorm = std::sqrt(squares);
  std::cout << fmt::format("  loss {:.7f} vs {:.7f}, gradient norm {:.6f} vs {:.6f}\n", loss.item<double>(), want["loss"].get<double>(), gradNorm,
                           want["grad_norm"].get<double>());
  EXPECT_NEAR(loss.item<double>(), want["loss"].get<double>(), 1e-5 * want["loss"].get<double>());
  EXPECT_NEAR(gradNorm, want["grad_norm"].get<double>(), 1e-4 * want["grad_norm"].get<double>());

  torch::NoGradGuard noGrad;
  KvCache cache;
  std::vector<std::int64_t> greedy;
  auto next = m->forward(torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.begin() + 5)).unsqueeze(0), &cache);
  for (int i = 0; i < 32; ++i) {
    const std::int64_t token = next[0][-1].argmax().item<std::int64_t>();
    greedy.push_back(token);
    next = m->forward(torch::tensor({token}).unsqueeze(0), &cache);
  }
  EXPECT_EQ(greedy, want["greedy"].get<std::vector<std::int64_t>>());
}

TEST(TransformersParity, ModelsTransformersMakesGiveItsLogitsHere) {
  if (!transformersAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no transformers (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  const nlohmann::json reference = transformersLogits("make", dir.path(), {dir.path().string()});
  for (const auto& [family, json] : familyConfigs()) {
    SCOPED_TRACE(family);
    ASSERT_TRUE(reference.contains(family));
    // Its own config.json as transformers wrote it (transformers 5 writes rope_parameters).
    CausalLm m(ModelConfig::load(dir / family / "config.json"));
    loadWeights(m, dir / family);
    m->eval();
    const auto [worst, largest] = logitDifference(m, reference[family]);
    std::cout << fmt::format("transformers -> here  {:20} max |logit difference| {:.2e} (largest logit {:.2f})\n", family, worst, largest);
    EXPECT_GT(largest, 0.5);
    EXPECT_LT(worst, 1e-4 * std::max(1.0, largest));
    expectSameTrainingStepAndGreedyTokens(m, reference[family]);
  }
}

TEST(TransformersParity, CheckpointsSavedHereGiveTheseLogitsInTransformers) {
  if (!transformersAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no transformers (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  std::map<std::string, CausalLm> models;
  std::vector<std::string> dirs;
  for (const auto& [family, json] : familyConfigs()) {
    torch::manual_seed(13);
    CausalLm m(ModelConfig::fromJson(json, family));
    {
      torch::NoGradGuard noGrad;
      for (auto& p : m->parameters()) p.normal_(0.0, 0.3);
    }
    m->eval();
    saveCheckpoint(m, dir / family);
    models.emplace(family, m);
    dirs.push_back((dir / family).string());
  }
  const nlohmann::json reference = transformersLogits("logits", dir.path(), dirs);
  for (auto& [family, m] : models) {
    SCOPED_TRACE(family);
    const auto [worst, largest] = logitDifference(m, reference.at((dir / family).string()));
    std::cout << fmt::format("here -> transformers  {:20} max |logit difference| {:.2e} (largest logit {:.2f})\n", family, worst, largest);
    EXPECT_GT(largest, 0.5);
    EXPECT_LT(worst, 1e-4 * std::max(1.0, largest));
  }
}

TEST(ModelConfig, ReadsEachFamilysFields) {
  std::map<std::string, ModelConfig> c;
  for (const auto& [family, json] : familyConfigs()) c.emplace(family, ModelConfig::fromJson(json, family));
  EXPECT_EQ(c.at("qwen3").headDim(), 16);  // not hidden_size / heads = 8
  EXPECT_TRUE(c.at("qwen3").qkNorm);
  EXPECT_FALSE(c.at("qwen3").attentionBias);
  EXPECT_EQ(c.at("deepseek-coder").ropeScaling.type, RopeScaling::Type::linear);
  EXPECT_EQ(c.at("qwen2.5-coder-yarn").ropeScaling.originalMaxPositions, 64);
  // Qwen3's weights: q/k norms of head_dim, q_proj of heads * head_dim rows.
  CausalLm qwen3(c.at("qwen3"));
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& p : qwen3->named_parameters()) shapes[p.key()] = p.value().sizes().vec();
  EXPECT_EQ(shapes.at("model.layers.0.self_attn.q_norm.weight"), (std::vector<std::int64_t>{16}));
  EXPECT_EQ(shapes.at("model.layers.0.self_attn.q_proj.weight"), (std::vector<std::int64_t>{64, 32}));
  EXPECT_EQ(shapes.at("model.layers.0.self_attn.o_proj.weight"), (std::vector<std::int64_t>{32, 64}));
  EXPECT_FALSE(shapes.contains("model.layers.0.self_attn.q_proj.bias"));
  std::int64_t total = 0;
  for (const auto& p : qwen3->parameters()) total += p.numel();
  EXPECT_EQ(total, c.at("qwen3").parameterCount());
  // What a checkpoint writes reads back as the same architecture.
  for (const auto& [family, config] : c) {
    const ModelConfig again = ModelConfig::fromJson(config.toJson(), family);
    EXPECT_EQ(again.toJson(), config.toJson()) << family;
  }
}

TEST(ModelConfig, RefusesWhatItDoesNotBuildByName) {
  const nlohmann::json good = familyConfigs().front().second;
  auto refused = [&](const nlohmann::json& patch, const std::string& needle) {
    nlohmann::json j = good;
    j.merge_patch(patch);
    CUSET_EXPECT_THROW_WITH(ModelConfig::fromJson(j, "llama/config.json"), "llama/config.json", needle);
  };
  refused({{"quantization_config", {{"quant_method", "awq"}}}}, "config field 'quantization_config' is not supported");
  refused({{"partial_rotary_factor", 0.5}}, "config field 'partial_rotary_factor' is not supported");
  refused({{"use_sliding_window", true}}, "use_sliding_window = true is not supported");
  refused({{"model_type", "mistral"}, {"sliding_window", 64}}, "sliding_window = 64");
  refused({{"hidden_act", "gelu"}}, "hidden_act 'gelu' is not supported");
  refused({{"mlp_bias", true}}, "mlp_bias = true");
  refused({{"layer_types", {"full_attention", "sliding_attention"}}}, "layer_types entry \"sliding_attention\"");
  refused({{"rope_scaling", {{"rope_type", "longrope"}}}}, "rope_scaling type 'longrope' is not supported");
  refused({{"rope_scaling", {{"short_factor", {1.0}}}}}, "rope_scaling field 'short_factor' is not supported");
  refused({{"rope_scaling", {{"factor", 0.5}}}}, "rope_scaling.factor = 0.5 must be at least 1");
  refused({{"rope_scaling", {{"low_freq_factor", nullptr}}}}, "needs low_freq_factor, high_freq_factor");
}

// Checkpointed layers recompute their activations in the backward pass: the same loss and the same
// gradients as keeping them, in float32 and under bf16 autocast (the recomputation must run under the
// forward's autocast state, though backward() is called outside it).
TEST(CausalLm, ActivationCheckpointingGivesTheSameLossAndGradients) {
  for (const bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16 autocast" : "float32");
    auto run = [&](bool checkpointed) {
      torch::manual_seed(5);
      CausalLm m(tinyConfig());
      m->train();
      m->activationCheckpointing = checkpointed;
      return lossAndGradients(m, torch::randint(0, 61, {2, 9}, torch::kInt64), bf16);
    };
    const LossAndGradients plain = run(false);
    const LossAndGradients checkpointed = run(true);
    EXPECT_EQ(plain.loss, checkpointed.loss);
    expectSameGradients(plain, checkpointed, 1e-6, 1e-7);
  }
}

// Where LibTorch has scaled_dot_product_attention the model uses it; its logits are the explicit
// path's within float tolerance, for a full forward and for decoding with the KV cache (a prompt, one
// token, then several tokens at once, which needs the explicit mask).
TEST(CausalLm, ScaledDotProductAttentionMatchesTheExplicitPath) {
  auto m = tinyModel();
  torch::NoGradGuard noGrad;
  const auto ids = torch::randint(0, 61, {2, 9}, torch::kInt64);
  auto decode = [&](bool sdpa) {
    m->useSdpa(sdpa);
    KvCache cache;
    std::vector<torch::Tensor> steps = {m->forward(ids.narrow(1, 0, 4), &cache), m->forward(ids.narrow(1, 4, 1), &cache),
                                        m->forward(ids.narrow(1, 5, 4), &cache)};
    return std::pair{m->forward(ids), torch::cat(steps, 1)};
  };
  const auto [explicitFull, explicitSteps] = decode(false);
  const auto [fusedFull, fusedSteps] = decode(true);
  EXPECT_TRUE(torch::allclose(explicitFull, fusedFull, 1e-4, 1e-5)) << (explicitFull - fusedFull).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(explicitSteps, fusedSteps, 1e-4, 1e-5)) << (explicitSteps - fusedSteps).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(fusedFull, fusedSteps, 1e-4, 1e-5));
}

// The fused attention is the explicit softmax(QK^T / sqrt(d)) V in training too: on grouped-query heads
// (4 query heads share 2 key/value heads in tinyConfig), causal, the loss and every parameter's gradient
// agree within float32 tolerance.
TEST(CausalLm, ScaledDotProductAttentionTrainsAsTheExplicitPath) {
  auto m = tinyModel();
  ASSERT_NE(m->config.numKvHeads, m->config.numHeads);  // grouped-query heads
  m->train();
  const auto ids = torch::randint(0, 61, {3, 11}, torch::kInt64);
  m->useSdpa(false);
  const LossAndGradients explicitPath = lossAndGradients(m, ids);
  m->useSdpa(true);
  const LossAndGradients fused = lossAndGradients(m, ids);
  EXPECT_NEAR(explicitPath.loss, fused.loss, 1e-5);
  expectSameGradients(explicitPath, fused, 1e-4, 1e-6);
}

// Right padding, as training batches are padded: with causal attention a real token never sees the
// padding after it, so a padded row's real positions give the logits of the row alone, through either
// attention path, and the two paths agree on the whole padded batch.
TEST(CausalLm, PaddedRowsGiveTheUnpaddedLogitsThroughEitherAttention) {
  auto m = tinyModel();
  torch::NoGradGuard noGrad;
  const auto longRow = torch::randint(0, 61, {1, 12}, torch::kInt64);
  const auto shortRow = torch::randint(0, 61, {1, 7}, torch::kInt64);
  const auto batch = torch::cat({longRow, torch::cat({shortRow, torch::zeros({1, 5}, torch::kInt64)}, 1)}, 0);  // pad id 0
  std::map<bool, torch::Tensor> batched;
  for (const bool sdpa : {false, true}) {
    SCOPED_TRACE(sdpa ? "sdpa" : "explicit");
    m->useSdpa(sdpa);
    batched[sdpa] = m->forward(batch);
    const auto alone = m->forward(shortRow)[0];
    EXPECT_TRUE(torch::allclose(batched[sdpa][1].narrow(0, 0, 7), alone, 1e-4, 1e-5))
        << (batched[sdpa][1].narrow(0, 0, 7) - alone).abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(batched[sdpa][0], m->forward(longRow)[0], 1e-4, 1e-5));
  }
  EXPECT_TRUE(torch::allclose(batched[false], batched[true], 1e-4, 1e-5)) << (batched[false] - batched[true]).abs().max().item<double>();
}

// What `precision: bf16` does on a CPU: the forward (fused attention included) and the backward run under
// bfloat16 autocast. The loss and the gradients stay finite and within bfloat16's precision of the
// float32 ones, and autocast really ran the projections in bfloat16.
TEST(CausalLm, Bf16AutocastForwardAndBackwardOnTheCpu) {
  auto m = tinyModel();
  m->train();
  const auto ids = torch::randint(0, 61, {2, 9}, torch::kInt64);
  const LossAndGradients fp32 = lossAndGradients(m, ids);
  const LossAndGradients bf16 = lossAndGradients(m, ids, true);
  auto flat = [](const LossAndGradients& r) {
    std::vector<torch::Tensor> parts;
    for (const auto& [name, g] : r.gradients) parts.push_back(g.flatten());
    return torch::cat(parts);
  };
  const torch::Tensor fp32Grad = flat(fp32), bf16Grad = flat(bf16);
  EXPECT_EQ(fp32.logitsType, torch::kFloat32);
  EXPECT_EQ(bf16.logitsType, torch::kBFloat16);
  EXPECT_TRUE(std::isfinite(bf16.loss));
  EXPECT_NE(bf16.loss, fp32.loss);  // the arithmetic did change
  EXPECT_NEAR(bf16.loss, fp32.loss, 0.02 * fp32.loss);
  EXPECT_TRUE(torch::isfinite(bf16Grad).all().item<bool>());
  EXPECT_GT(torch::cosine_similarity(bf16Grad, fp32Grad, 0).item<double>(), 0.99) << "the bf16 gradient points elsewhere";
  EXPECT_NEAR(bf16Grad.norm().item<double>(), fp32Grad.norm().item<double>(), 0.05 * fp32Grad.norm().item<double>());
}

TEST(Rope, IsTheClosedFormRotation) {
  const std::int64_t D = 8;
  const double theta = 10000.0;
  const Rope rope(D, theta);
  const auto x = torch::randn({1, 1, 3, D});
  const auto y = rope.apply(x, 4);  // positions 4, 5, 6
  for (std::int64_t t = 0; t < 3; ++t) {
    for (std::int64_t i = 0; i < D / 2; ++i) {
      const double angle = static_cast<double>(4 + t) / std::pow(theta, 2.0 * static_cast<double>(i) / D);
      const double a = x[0][0][t][i].item<double>(), b = x[0][0][t][i + D / 2].item<double>();
      EXPECT_NEAR(y[0][0][t][i].item<double>(), a * std::cos(angle) - b * std::sin(angle), 1e-5);
      EXPECT_NEAR(y[0][0][t][i + D / 2].item<double>(), b * std::cos(angle) + a * std::sin(angle), 1e-5);
    }
  }
  // A rotation keeps norms, and position 0 is the identity.
  EXPECT_TRUE(torch::allclose(y.norm(2, -1), x.norm(2, -1), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(rope.apply(x, 0).narrow(2, 0, 1), x.narrow(2, 0, 1)));
}

}  // namespace
}  // namespace cuset
