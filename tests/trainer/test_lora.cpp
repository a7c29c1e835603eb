// LoRA adapters end to end on a tiny model: only the adapters train, the frozen base is rho1's
// reference, the saved adapter is PEFT's format, and merging it gives base-plus-adapter's logits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iostream>
#include <set>

#include "cuset/common/json_util.hpp"
#include "cuset/trainer/generation.hpp"
#include "cuset/trainer/lora_adapter.hpp"
#include "cuset/trainer/safetensors.hpp"
#include "cuset/trainer/tokenizer.hpp"
#include "cuset/trainer/training.hpp"
#include "python_reference.hpp"
#include "reference_logits.hpp"
#include "test_util.hpp"
#include "training_test_util.hpp"

namespace cuset {
namespace {

namespace fs = std::filesystem;

std::string yamlFor(const std::string& model, int steps, const std::string& extra) {
  return fmt::format(R"(seed: 7
threads: 1
model: {}
tokenizer: {{train_vocab_size: 400}}
data: {{train: {}/data/sft-tiny.jsonl, max_tokens: 300}}
optimizer: {{lr: 5.0e-3, warmup_steps: 1}}
batch: {{size: 4}}
steps: {{max: {}, log_every: 2, save_every: 100}}
{}
)",
                     model, CUSET_SOURCE_DIR, steps, extra);
}

TrainRunOptions quiet(const fs::path& out) { return test::quietRun(out); }

// A base model with its tokenizer, as a pretrained HF folder would be: a few steps of full training.
const fs::path& baseModel() {
  static test::TempDir dir;
  static const fs::path base = [] {
    test::writeText(dir / "base.yaml",
                    yamlFor("{config: {model_type: llama, hidden_size: 48, intermediate_size: 96, num_hidden_layers: 2, num_attention_heads: 4, "
                            "num_key_value_heads: 2, max_position_embeddings: 1024}}",
                            4, ""));
    return runTraining(TrainConfig::load(dir / "base.yaml"), quiet(dir / "base")).finalCheckpoint;
  }();
  return base;
}

const std::string kLora = "adapter: {type: lora, r: 4, alpha: 8, dropout: 0.0, target_modules: [q_proj, v_proj, down_proj]}\n";

std::map<std::string, torch::Tensor> weightsOf(CausalLm& m) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : m->named_parameters()) out[p.key()] = p.value().detach().clone();
  return out;
}

TEST(Lora, OnlyTheAdaptersTrainAndTheSavedFolderIsPeftsFormat) {
  test::TempDir dir;
  test::writeText(dir / "lora.yaml", yamlFor("{path: " + baseModel().string() + "}", 16, kLora));
  const TrainRunSummary s = runTraining(TrainConfig::load(dir / "lora.yaml"), quiet(dir / "run"));
  EXPECT_LT(s.lastLoss, s.firstLoss) << s.firstLoss << " -> " << s.lastLoss;

  // PEFT's files: adapter_config.json naming the base, adapter_model.safetensors with PEFT's names.
  const fs::path adapter = s.finalCheckpoint;
  EXPECT_TRUE(isAdapterFolder(adapter));
  EXPECT_FALSE(fs::exists(adapter / "model.safetensors"));
  const auto config = readJsonFile(adapter / "adapter_config.json");
  EXPECT_EQ(config["peft_type"], "LORA");
  EXPECT_EQ(config["task_type"], "CAUSAL_LM");
  EXPECT_EQ(config["r"], 4);
  EXPECT_EQ(config["lora_alpha"], 8.0);
  EXPECT_EQ(config["bias"], "none");
  EXPECT_EQ(config["target_modules"], (nlohmann::json{"q_proj", "v_proj", "down_proj"}));
  EXPECT_EQ(fs::path(config["base_model_name_or_path"].get<std::string>()), fs::absolute(baseModel()));
  const auto file = safetensors::File::open(adapter / "adapter_model.safetensors");
  std::set<std::string> names;
  for (const auto& t : file.tensors()) names.insert(t.name);
  EXPECT_EQ(names.size(), 2u * 3u * 2u);  // A and B, three modules, two layers
  const auto* a = file.find("base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight");
  const auto* b = file.find("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->shape, (std::vector<std::int64_t>{4, 48}));  // (r, in)
  EXPECT_EQ(b->shape, (std::vector<std::int64_t>{48, 4}));  // (out, r)

  // The base is untouched, the adapters moved away from B = 0.
  CausalLm base(ModelConfig::load(baseModel() / "config.json"));
  loadWeights(base, baseModel());
  CausalLm tuned = loadModelFolder(adapter, torch::kCPU);
  const auto before = weightsOf(base), after = weightsOf(tuned);
  std::size_t adapters = 0;
  for (const auto& [name, value] : after) {
    if (name.find(".lora_") != std::string::npos) {
      ++adapters;
      if (name.find("lora_B") != std::string::npos) EXPECT_GT(value.abs().max().item<double>(), 0.0) << name;
      continue;
    }
    EXPECT_TRUE(torch::equal(value, before.at(name))) << name << " changed";
  }
  EXPECT_EQ(adapters, 12u);
  EXPECT_TRUE(fs::exists(modelTokenizerPath(adapter)));
}

// rho1 and cuset's `confidence: reference` take the frozen base as their reference (the model with its
// adapters off) when no objective.reference_model is given: both train without a second model.
TEST(Lora, TheFrozenBaseIsTheReferenceModel) {
  test::TempDir dir;
  for (const std::string objective : {"{type: rho1}", "{type: cuset, confidence: reference}"}) {
    SCOPED_TRACE(objective);
    const std::string name = objective.substr(7, 4);
    test::writeText(dir / (name + ".yaml"), yamlFor("{path: " + baseModel().string() + "}", 2, kLora + "objective: " + objective + "\n"));
    const TrainRunSummary s = runTraining(TrainConfig::load(dir / (name + ".yaml")), quiet(dir / name));
    EXPECT_TRUE(std::isfinite(s.firstLoss));
    EXPECT_TRUE(isAdapterFolder(s.finalCheckpoint));
  }
}

// The frozen base in bfloat16 (the default on a GPU; asked for here on the CPU): the adapters stay
// float32, their product is added in the base's dtype, and they learn.
TEST(Lora, ABfloat16BaseTrainsFloat32Adapters) {
  test::TempDir dir;
  std::string lora = kLora;
  lora.replace(lora.find("}"), 1, ", base_dtype: bf16}");
  test::writeText(dir / "lora.yaml", yamlFor("{path: " + baseModel().string() + "}", 12, lora));
  EXPECT_EQ(TrainConfig::load(dir / "lora.yaml").adapter->baseDtype, "bf16");
  const TrainRunSummary s = runTraining(TrainConfig::load(dir / "lora.yaml"), quiet(dir / "run"));
  EXPECT_LT(s.lastLoss, s.firstLoss) << s.firstLoss << " -> " << s.lastLoss;
  const auto file = safetensors::File::open(s.finalCheckpoint / "adapter_model.safetensors");
  for (const auto& t : file.tensors()) EXPECT_EQ(t.dtype, safetensors::DType::F32) << t.name;
}

// A resumed LoRA run reads the base from model.path and the adapters and optimizer state from its
// checkpoint, and ends where the uninterrupted run ends.
TEST(Lora, AResumedRunEqualsTheUninterruptedOne) {
  test::TempDir dir;
  std::string yaml = yamlFor("{path: " + baseModel().string() + "}", 4, kLora);
  yaml.replace(yaml.find("save_every: 100"), 15, "save_every: 2");
  test::writeText(dir / "lora.yaml", yaml);
  const TrainConfig config = TrainConfig::load(dir / "lora.yaml");
  const fs::path straight = runTraining(config, quiet(dir / "straight")).finalCheckpoint;
  const TrainRunSummary s = test::trainInterruptedAndResumed(config, dir / "resumed", 2);
  EXPECT_EQ(s.startStep, 2);
  CausalLm a = loadModelFolder(straight, torch::kCPU), b = loadModelFolder(s.finalCheckpoint, torch::kCPU);
  for (const auto& p : a->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), b->named_parameters()[p.key()])) << p.key();
}

TEST(Lora, TheMergedModelGivesBasePlusAdaptersLogits) {
  test::TempDir dir;
  test::writeText(dir / "lora.yaml", yamlFor("{path: " + baseModel().string() + "}", 4, kLora));
  const fs::path adapter = runTraining(TrainConfig::load(dir / "lora.yaml"), quiet(dir / "run")).finalCheckpoint;
  CausalLm withAdapters = loadModelFolder(adapter, torch::kCPU);
  torch::NoGradGuard noGrad;
  const auto ids = torch::tensor(std::vector<std::int64_t>{5, 17, 42, 3, 99, 7}).unsqueeze(0);
  const auto expected = withAdapters->forward(ids);
  {
    const AdaptersDisabled off(withAdapters);
    EXPECT_FALSE(torch::allclose(withAdapters->forward(ids), expected, 1e-6, 1e-6)) << "the adapters changed nothing";
  }
  mergeAdapterFolder(adapter, dir / "merged");
  EXPECT_TRUE(fs::exists(dir / "merged" / "config.json"));
  EXPECT_TRUE(fs::exists(dir / "merged" / "tokenizer.json"));
  CausalLm merged = loadModelFolder(dir / "merged", torch::kCPU);
  for (const auto& p : merged->named_parameters()) EXPECT_EQ(p.key().find(".lora_"), std::string::npos) << p.key();
  const auto got = merged->forward(ids);
  EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-5)) << (got - expected).abs().max().item<double>();
}

// `cuset generate` (and so loop and leaderboard) takes an adapter folder as a model: greedy samples from
// it are those of its merged checkpoint.
TEST(Lora, GenerationReadsAnAdapterFolderAsItsMergedModel) {
  test::TempDir dir;
  test::writeText(dir / "lora.yaml", yamlFor("{path: " + baseModel().string() + "}", 4, kLora));
  const fs::path adapter = runTraining(TrainConfig::load(dir / "lora.yaml"), quiet(dir / "run")).finalCheckpoint;
  mergeAdapterFolder(adapter, dir / "merged");
  auto generate = [&](const fs::path& model, const std::string& out) {
    GenerateOptions o;
    o.modelDir = model;
    o.modelName = "m";
    o.problemsDir = CUSET_PROBLEMS_DIR;
    o.temperature = 0.0;
    o.maxNewTokens = 6;
    o.threads = 1;
    o.device = "cpu";
    o.showProgress = false;
    o.outFile = dir / out;
    runGeneration(o);
    return test::readText(dir / out);
  };
  const std::string fromAdapter = generate(adapter, "adapter.jsonl");
  EXPECT_FALSE(fromAdapter.empty());
  EXPECT_EQ(fromAdapter, generate(dir / "merged", "merged.jsonl"));
}

TEST(Lora, ConfigsAndAdapterFilesAreValidatedByName) {
  test::TempDir dir;
  auto refused = [&](const std::string& model, const std::string& adapter, const std::string& needle) {
    test::writeText(dir / "c.yaml", yamlFor(model, 2, adapter));
    CUSET_EXPECT_THROW_WITH(TrainConfig::load(dir / "c.yaml"), "c.yaml", needle);
  };
  const std::string path = "{path: " + baseModel().string() + "}";
  refused("{config: {hidden_size: 48, intermediate_size: 96, num_hidden_layers: 1, num_attention_heads: 4}}", kLora, "give model.path");
  refused(path, "adapter: {type: lora, r: 0}\n", "adapter.r = 0 must be between 1 and 4096");
  refused(path, "adapter: {type: lora, target_modules: [lm_head]}\n", "adapter target module 'lm_head' is not one of");
  refused(path, "adapter: {type: dora}\n", "must be lora");
  refused(path, "adapter: {type: lora, rank: 8}\n", "rank");
  nlohmann::json peft = LoraConfig{}.toPeftConfig("/base");
  EXPECT_EQ(LoraConfig::fromPeftConfig(peft, "a.json").r, 16);
  peft["use_dora"] = true;
  CUSET_EXPECT_THROW_WITH(LoraConfig::fromPeftConfig(peft, "a.json"), "a.json", "use_dora = true is not supported");
  peft = LoraConfig{}.toPeftConfig("/base");
  peft["modules_to_save"] = {"lm_head"};
  CUSET_EXPECT_THROW_WITH(LoraConfig::fromPeftConfig(peft, "a.json"), "modules_to_save is not supported");
}

// PEFT itself as the reference (issue #51): an adapter PEFT makes (rank 4, alpha 8, all seven
// projections, B far from zero) gives PEFT's logits here and `cuset merge-adapter` gives
// merge_and_unload's; an adapter written here gives these logits in PEFT.
const std::vector<std::int64_t> kPeftIds = {3, 17, 42, 0, 60, 5, 9, 33, 21};

double maxDifference(const torch::Tensor& logits, const nlohmann::json& want) { return test::maxLogitDifference(logits, want); }

torch::Tensor logitsOf(CausalLm& m) {
  torch::NoGradGuard noGrad;
  return m->forward(torch::tensor(kPeftIds).unsqueeze(0))[0];
}

nlohmann::json peftReference(const test::TempDir& dir, const std::string& args) {
  test::writeText(dir / "ids.json", nlohmann::json(kPeftIds).dump());
  int status = 0;
  const std::string out = test::runReference("peft_adapters.py " + args + " " + (dir / "ids.json").string(), (dir / "stderr.txt").string(), status);
  EXPECT_EQ(status, 0) << out << test::readText(dir / "stderr.txt");
  return status == 0 ? nlohmann::json::parse(out) : nlohmann::json();
}

TEST(PeftParity, AnAdapterPeftMakesGivesItsLogitsHereAndMergesAsMergeAndUnload) {
  if (!test::pythonHas("peft")) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no peft (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  const nlohmann::json reference = peftReference(dir, "make " + dir.path().string());
  ASSERT_TRUE(reference.is_object());
  CausalLm adapted = loadModelFolder(dir / "adapter", torch::kCPU);
  const auto logits = logitsOf(adapted);
  const double adapterDiff = maxDifference(logits, reference["adapter"]);
  std::cout << fmt::format("PEFT adapter -> here: max |logit difference| {:.2e} (the adapter moves logits by {:.2f})\n", adapterDiff,
                           maxDifference(logits, reference["base"]));
  EXPECT_GT(maxDifference(logits, reference["base"]), 0.1);  // the adapter matters
  EXPECT_LT(adapterDiff, 1e-4);
  mergeAdapterFolder(dir / "adapter", dir / "merged");
  CausalLm merged = loadModelFolder(dir / "merged", torch::kCPU);
  const double mergedDiff = maxDifference(logitsOf(merged), reference["merged"]);
  std::cout << fmt::format("cuset merge-adapter vs merge_and_unload: max |logit difference| {:.2e}\n", mergedDiff);
  EXPECT_LT(mergedDiff, 1e-4);
}

TEST(PeftParity, AnAdapterWrittenHereGivesTheseLogitsInPeft) {
  if (!test::pythonHas("peft")) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no peft (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  torch::manual_seed(4);
  CausalLm m(ModelConfig::fromJson({{"model_type", "llama"},
                                    {"vocab_size", 61},
                                    {"hidden_size", 32},
                                    {"intermediate_size", 48},
                                    {"num_hidden_layers", 2},
                                    {"num_attention_heads", 4},
                                    {"num_key_value_heads", 2}},
                                   "tiny"));
  torch::NoGradGuard noGrad;
  for (auto& p : m->parameters()) p.normal_(0.0, 0.3);
  saveCheckpoint(m, dir / "base");
  LoraConfig lora;
  lora.r = 4;
  lora.alpha = 8;
  lora.dropout = 0.0;
  attachLora(m, lora);
  for (auto& p : m->named_parameters()) {
    if (p.key().find("lora_") != std::string::npos) p.value().normal_(0.0, 0.2);
  }
  m->eval();
  saveAdapter(m, lora, dir / "base", dir / "adapter");
  const nlohmann::json reference = peftReference(dir, "logits " + (dir / "base").string() + " " + (dir / "adapter").string());
  ASSERT_TRUE(reference.is_array());
  const double diff = maxDifference(logitsOf(m), reference);
  std::cout << fmt::format("adapter written here -> PEFT: max |logit difference| {:.2e}\n", diff);
  EXPECT_LT(diff, 1e-4);
}

}  // namespace
}  // namespace cuset
