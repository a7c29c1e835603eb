// The SFT loop end to end on a tiny model: loss falls, a resumed run equals an uninterrupted one,
// checkpoints load as HF folders, configs are validated.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cuset/common/json_util.hpp"
#include "cuset/trainer/analysis.hpp"
#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/tokenizer.hpp"
#include "cuset/trainer/training.hpp"
#include "test_util.hpp"
#include "training_test_util.hpp"

namespace cuset {
namespace {

namespace fs = std::filesystem;

std::string tinyYaml(int maxSteps, int saveEvery) {
  return fmt::format(R"(seed: 7
threads: 1
model:
  config: {{model_type: qwen2, hidden_size: 48, intermediate_size: 96, num_hidden_layers: 1, num_attention_heads: 4,
           num_key_value_heads: 2, max_position_embeddings: 1024, tie_word_embeddings: true}}
tokenizer: {{train_vocab_size: 400}}
data: {{train: {}/data/sft-tiny.jsonl, max_tokens: 400}}
optimizer: {{lr: 5.0e-3, warmup_steps: 2}}
batch: {{size: 4}}
steps: {{max: {}, log_every: 3, save_every: {}}}
)",
                     CUSET_SOURCE_DIR, maxSteps, saveEvery);
}

std::vector<nlohmann::json> metrics(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

TrainRunOptions quiet(const std::filesystem::path& out) { return test::quietRun(out); }

TEST(Training, LossFallsAndTheFinalModelIsAnHfFolder) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", tinyYaml(24, 100));
  const TrainRunSummary s = runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run"));
  EXPECT_EQ(s.endStep, 24);
  EXPECT_LT(s.lastLoss, s.firstLoss * 0.8) << s.firstLoss << " -> " << s.lastLoss;
  const auto m = metrics(dir / "run");
  ASSERT_EQ(m.size(), 8u);
  for (const char* key : {"step", "loss", "lr", "tokens_per_s"}) EXPECT_TRUE(m[0].contains(key)) << key;
  CausalLm loaded(ModelConfig::load(s.finalCheckpoint / "config.json"));
  loadWeights(loaded, s.finalCheckpoint);
  EXPECT_GT(BpeTokenizer::load(s.finalCheckpoint / "tokenizer.json").tokenId("<|im_end|>"), 0);
  // A second run into the same folder without --resume is refused, and nothing is overwritten.
  EXPECT_THROW(runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run")), Error);
  EXPECT_EQ(metrics(dir / "run").size(), 8u);
}

TEST(Training, AResumedRunEqualsTheUninterruptedOne) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", tinyYaml(12, 6));
  const TrainConfig config = TrainConfig::load(dir / "c.yaml");
  runTraining(config, quiet(dir / "straight"));
  // An interruption after step 6's checkpoint: metrics logged past it would be redone.
  const TrainRunSummary s = test::trainInterruptedAndResumed(config, dir / "resumed", 6);
  EXPECT_EQ(s.startStep, 6);
  const auto a = metrics(dir / "straight"), b = metrics(dir / "resumed");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["step"], b[i]["step"]);
    EXPECT_DOUBLE_EQ(a[i]["loss"].get<double>(), b[i]["loss"].get<double>()) << "step " << a[i]["step"];
  }
  CausalLm x(ModelConfig::load(dir / "straight/final/config.json")), y(ModelConfig::load(dir / "resumed/final/config.json"));
  loadWeights(x, dir / "straight/final");
  loadWeights(y, dir / "resumed/final");
  for (const auto& p : x->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), y->named_parameters()[p.key()])) << p.key();
}

// Interrupted before its first checkpoint, a run resumed starts over, and its metrics with it (before:
// the stale rows stayed, steps 3 6 3 6).
TEST(Training, AResumeBeforeAnyCheckpointStartsOverWithCleanMetrics) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", tinyYaml(6, 100));
  const TrainConfig config = TrainConfig::load(dir / "c.yaml");
  runTraining(config, quiet(dir / "run"));
  std::filesystem::remove_all(dir / "run" / "checkpoints");  // as if killed before saving one
  std::filesystem::remove_all(dir / "run" / "final");
  TrainRunOptions again = quiet(dir / "run");
  again.resume = true;
  runTraining(config, again);
  std::vector<std::int64_t> steps;
  for (const auto& m : metrics(dir / "run")) steps.push_back(m["step"].get<std::int64_t>());
  EXPECT_EQ(steps, (std::vector<std::int64_t>{3, 6}));
}

// A model the machine cannot hold is one line naming its sizes (before: LibTorch's allocator aborted
// with a stack trace, rc 134).
TEST(Training, AModelTooLargeForTheMachineIsOneLineNamingItsSizes) {
  test::TempDir dir;
  std::string yaml = tinyYaml(2, 100);
  yaml.replace(yaml.find("hidden_size: 48"), 15, "hidden_size: 1000000000");
  test::writeText(dir / "c.yaml", yaml);
  CUSET_EXPECT_THROW_WITH(runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run")), "c.yaml", "hidden_size 1000000000", "GB");
}

TEST(Training, Bf16MixedPrecisionLearnsAndKeepsFloat32Weights) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", tinyYaml(24, 100) + "precision: bf16\n");
  const TrainRunSummary s = runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run"));
  EXPECT_LT(s.lastLoss, s.firstLoss * 0.8) << s.firstLoss << " -> " << s.lastLoss;
  const auto config = nlohmann::json::parse(test::readText(s.finalCheckpoint / "config.json"));
  EXPECT_EQ(config["torch_dtype"], "float32");  // master weights stay float32
  // Autocast really changed the arithmetic: the same run in float32 logs other losses.
  test::writeText(dir / "f.yaml", tinyYaml(24, 100));
  runTraining(TrainConfig::load(dir / "f.yaml"), quiet(dir / "fp32"));
  EXPECT_NE(metrics(dir / "run")[0]["loss"].get<double>(), metrics(dir / "fp32")[0]["loss"].get<double>());
}

// `checkpointing: true` changes memory, not arithmetic: the logged losses and the final weights equal
// a run that keeps its activations.
TEST(Training, ActivationCheckpointingTrainsExactlyAsWithout) {
  test::TempDir dir;
  test::writeText(dir / "plain.yaml", tinyYaml(6, 100));
  test::writeText(dir / "ckpt.yaml", tinyYaml(6, 100) + "checkpointing: true\n");
  EXPECT_TRUE(TrainConfig::load(dir / "ckpt.yaml").activationCheckpointing);
  const TrainRunSummary a = runTraining(TrainConfig::load(dir / "plain.yaml"), quiet(dir / "plain"));
  const TrainRunSummary b = runTraining(TrainConfig::load(dir / "ckpt.yaml"), quiet(dir / "ckpt"));
  const auto ma = metrics(dir / "plain"), mb = metrics(dir / "ckpt");
  ASSERT_EQ(ma.size(), mb.size());
  for (std::size_t i = 0; i < ma.size(); ++i) EXPECT_DOUBLE_EQ(ma[i]["loss"].get<double>(), mb[i]["loss"].get<double>());
  CausalLm x(ModelConfig::load(a.finalCheckpoint / "config.json")), y(ModelConfig::load(b.finalCheckpoint / "config.json"));
  loadWeights(x, a.finalCheckpoint);
  loadWeights(y, b.finalCheckpoint);
  for (const auto& p : x->named_parameters()) EXPECT_TRUE(torch::allclose(p.value(), y->named_parameters()[p.key()], 1e-5, 1e-6)) << p.key();
}

// Every objective trains end to end and logs its statistics; cuset sees sensitive tokens in the
// bundled CUDA data and masks some of the others.
TEST(Training, EveryObjectiveTrainsAndLogsItsStatistics) {
  test::TempDir dir;
  for (const char* objective : {"{type: cuset, confidence: reference, mask: {quantile: 0.3}}", "{type: cuset-reweight-only}", "{type: dft}",
                                "{type: rho1}", "{type: profit, profit: {tau: 0.01}}"}) {
    const std::string name = std::to_string(std::hash<std::string>{}(objective));
    test::writeText(dir / (name + ".yaml"), tinyYaml(3, 100) + "objective: " + objective + "\n");
    const TrainRunSummary s = runTraining(TrainConfig::load(dir / (name + ".yaml")), quiet(dir / name));
    EXPECT_TRUE(std::isfinite(s.lastLoss)) << objective;
    const auto m = metrics(dir / name);
    ASSERT_FALSE(m.empty()) << objective;
    EXPECT_TRUE(m.back().contains("masked_fraction") && m.back().contains("weight_max")) << m.back().dump();
    if (std::string(objective).find("quantile") != std::string::npos) {
      EXPECT_GT(m.back()["sensitive_share"].get<double>(), 0.0) << m.back().dump();
      EXPECT_GT(m.back()["masked_fraction"].get<double>(), 0.1) << m.back().dump();
    }
  }
}

// rho1 against a separate reference model (as Rho-1 uses one trained on curated data).
TEST(Training, ReferenceModelFromAFolder) {
  test::TempDir dir;
  test::writeText(dir / "ref.yaml", tinyYaml(2, 100));
  runTraining(TrainConfig::load(dir / "ref.yaml"), quiet(dir / "ref"));
  // The same tokenizer (learned from the same data and seed) keeps the vocabularies equal.
  test::writeText(dir / "c.yaml", tinyYaml(2, 100) + "objective: {type: rho1, reference_model: " + (dir / "ref/final").string() + "}\n");
  const TrainRunSummary s = runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run"));
  EXPECT_TRUE(std::isfinite(s.lastLoss));
  test::writeText(dir / "bad.yaml", tinyYaml(2, 100) + "objective: {type: rho1, reference_model: " + (dir / "nowhere").string() + "}\n");
  CUSET_EXPECT_THROW_WITH(TrainConfig::load(dir / "bad.yaml"), "objective.reference_model", "has no config.json");
}

// Fine-tuning a model whose folder has its own chat template trains through it, and every checkpoint
// carries it (the rendering itself: test_chat_template.cpp, against transformers).
TEST(Training, AModelsOwnChatTemplateRendersTheDataAndTravelsWithItsCheckpoints) {
  test::TempDir dir;
  test::writeText(dir / "base.yaml", tinyYaml(2, 100));
  const fs::path base = runTraining(TrainConfig::load(dir / "base.yaml"), quiet(dir / "base")).finalCheckpoint;
  EXPECT_FALSE(fs::exists(base / "tokenizer_config.json"));  // ChatML: the tiny model's own format
  const std::string chatTemplate =
      "{% if messages[0].role != 'system' %}<|im_start|>system\nYou are tiny.<|im_end|>\n{% endif %}"
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
      "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  writeJsonFileAtomic(base / "tokenizer_config.json", {{"chat_template", chatTemplate}, {"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}});
  std::string yaml = tinyYaml(2, 1);
  yaml.replace(yaml.find("  config:"), yaml.find("tokenizer:") - yaml.find("  config:"), "  path: " + base.string() + "\n");
  yaml.replace(yaml.find("tokenizer: {train_vocab_size: 400}\n"), std::string("tokenizer: {train_vocab_size: 400}\n").size(), "");
  test::writeText(dir / "c.yaml", yaml);
  const TrainRunSummary s = runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run"));
  EXPECT_TRUE(std::isfinite(s.lastLoss));
  for (const fs::path& folder : {s.finalCheckpoint, dir / "run" / "checkpoints" / "step-1"}) {
    SCOPED_TRACE(folder.string());
    const ChatFormat format = ChatFormat::fromFolder(folder);
    ASSERT_FALSE(format.isChatMl());
    EXPECT_EQ(format.renderPrompt({{"user", "q"}}),
              "<|im_start|>system\nYou are tiny.<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n");
    EXPECT_EQ(format.padToken(), "<|endoftext|>");
  }

  // tokenizer.chat_template: a training-specific template replaces the folder's, and travels instead.
  test::writeText(dir / "train.jinja",
                  "{% for m in messages %}<|im_start|>{{ m.role }}:{{ m.content }}<|im_end|>{% endfor %}"
                  "{% if add_generation_prompt %}<|im_start|>assistant:{% endif %}");
  test::writeText(dir / "own.yaml", yaml + "tokenizer: {chat_template: train.jinja}\n");
  const TrainRunSummary own = runTraining(TrainConfig::load(dir / "own.yaml"), quiet(dir / "own"));
  EXPECT_TRUE(fs::exists(own.finalCheckpoint / "chat_template.jinja"));
  EXPECT_EQ(ChatFormat::fromFolder(own.finalCheckpoint).renderPrompt({{"user", "q"}}), "<|im_start|>user:q<|im_end|><|im_start|>assistant:");
  test::writeText(dir / "missing.yaml", yaml + "tokenizer: {chat_template: nowhere.jinja}\n");
  CUSET_EXPECT_THROW_WITH(TrainConfig::load(dir / "missing.yaml"), "tokenizer.chat_template", "nowhere.jinja", "is not a file");
}

// `cuset analyze` on a briefly trained model: confidences of sensitive and other response tokens,
// categories, regions and heat-map tokens that line up with the sample text.
TEST(Analysis, SummarisesConfidenceBySensitivity) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", tinyYaml(2, 100));
  runTraining(TrainConfig::load(dir / "c.yaml"), quiet(dir / "run"));
  AnalysisOptions o;
  o.modelDir = dir / "run/final";
  o.dataFile = std::string(CUSET_SOURCE_DIR) + "/data/sft-tiny.jsonl";
  o.maxSamples = 4;
  o.heatmapSamples = 2;
  o.showProgress = false;
  o.threads = 1;
  const nlohmann::json a = analyzeModel(o);
  EXPECT_EQ(a["samples"], 4);
  EXPECT_GT(a["sensitive"]["tokens"].get<long>(), 0);
  EXPECT_GT(a["other"]["tokens"].get<long>(), 0);
  long binned = 0;
  for (const auto& n : a["sensitive"]["counts"]) binned += n.get<long>();
  EXPECT_EQ(binned, a["sensitive"]["tokens"].get<long>());
  EXPECT_TRUE(a["categories"].contains("builtin")) << a["categories"].dump();
  ASSERT_EQ(a["heatmap"].size(), 2u);
  const std::string text = a["heatmap"][0]["text"];
  for (const auto& t : a["heatmap"][0]["tokens"]) {
    EXPECT_LE(t["end"].get<std::size_t>(), text.size());
    const double p = t["confidence"];
    EXPECT_TRUE(p >= 0.0 && p <= 1.0);
  }
}

TEST(TrainConfig, ErrorsNameTheFieldAndLine) {
  test::TempDir dir;
  test::writeText(dir / "a.yaml", tinyYaml(5, 5) + "learning_rate: 3\n");
  CUSET_EXPECT_THROW_WITH(TrainConfig::load(dir / "a.yaml"), "a.yaml", "learning_rate", "unknown key");
  test::writeText(dir / "b.yaml", tinyYaml(5, 5) + "objective: {type: cusett}\n");
  CUSET_EXPECT_THROW_WITH(TrainConfig::load(dir / "b.yaml"), "objective.type", "unknown objective");
  test::writeText(dir / "c.yaml", "model: {}\ndata: {train: x.jsonl}\n");
  CUSET_EXPECT_THROW_WITH(TrainConfig::load(dir / "c.yaml"), "exactly one of 'path'");
  const TrainConfig c = TrainConfig::load((test::writeText(dir / "d.yaml", tinyYaml(100, 5)), dir / "d.yaml"));
  EXPECT_NEAR(c.learningRate(0), 2.5e-3, 1e-12);  // warm-up
  EXPECT_NEAR(c.learningRate(2), 5e-3, 1e-12);    // peak
  EXPECT_NEAR(c.learningRate(100), 5e-4, 1e-12);  // lr * min_lr_ratio at the end
}

}  // namespace
}  // namespace cuset
