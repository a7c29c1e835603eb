#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cuset/loop/loop_config.hpp"
#include "cuset/loop/loop_runner.hpp"
#include "cuset/trainer/train_config.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

using nlohmann::json;

// A loop small enough for a unit test (tests/loop/micro-loop.yaml), plus `extra` top-level keys.
std::string microLoop(const std::string& extra = "") { return test::readText(CUSET_SOURCE_DIR "/tests/loop/micro-loop.yaml") + extra; }

class Loop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("CUSET_WORKER", CUSET_BINARY, 1); }
};

TEST_F(Loop, ConfigErrorsNameFileAndField) {
  test::TempDir dir;
  const auto load = [&](const std::string& text) {
    test::writeText(dir / "loop.yaml", text);
    return LoopConfig::load(dir / "loop.yaml");
  };
  EXPECT_NO_THROW(load(microLoop()));
  CUSET_EXPECT_THROW_WITH(load(microLoop("colour: blue\n")), "loop.yaml", "colour");
  std::string text = microLoop();
  text.replace(text.find("seeds: [1, 2]"), 13, "seeds: [1, 1]");
  CUSET_EXPECT_THROW_WITH(load(text), "loop.yaml", "seeds", "repeated");
  text = microLoop();
  text.replace(text.find("[sft, {name: cuset-q3,"), 22, "[sft, {name: sft,");
  CUSET_EXPECT_THROW_WITH(load(text), "objectives[1]", "used twice");
  text = microLoop();
  text.replace(text.find("  threads: 1\n"), 13, "  threads: 1\n  seed: 4\n");
  CUSET_EXPECT_THROW_WITH(load(text), "train.seed", "set by the loop");
  text = microLoop();
  text.replace(text.find("type: cuset,"), 12, "type: cusett,");
  CUSET_EXPECT_THROW_WITH(load(text), "objective 'cuset-q3'", "objective.type", "unknown objective");
}

// The shipped configs stay loadable (every run's training config included) as the formats evolve.
TEST_F(Loop, ShippedConfigsLoad) {
  const LoopConfig tiny = LoopConfig::load(CUSET_SOURCE_DIR "/configs/loop-tiny.yaml");
  EXPECT_GE(tiny.seeds.size(), 3u);
  EXPECT_EQ(tiny.backend, "sim");
  ASSERT_TRUE(tiny.base.has_value());
  EXPECT_NE(tiny.baseTrainYaml("train.jsonl").find("max: 900"), std::string::npos);
  EXPECT_EQ(tiny.trainYaml(tiny.objectives[0], 1, "train.jsonl").find("max: 900"), std::string::npos);  // the warm start's steps stay its own

  LoopConfig gpu = LoopConfig::load(CUSET_SOURCE_DIR "/configs/loop-gpu.yaml");
  EXPECT_EQ(gpu.backend, "cuda");
  EXPECT_TRUE(gpu.pretrained());
  CUSET_EXPECT_THROW_WITH(gpu.overrideModelPath("/no/such/model"), "--model", "/no/such/model", "config.json");
  test::TempDir model;
  test::writeText(model / "config.json", "{}");
  gpu.overrideModelPath(model.path());
  EXPECT_NE(gpu.trainYaml(gpu.objectives[0], 1, "t.jsonl").find(model.path().string()), std::string::npos);

  // The 7B LoRA recipe (docs/recipe-7b.md): every objective's run trains adapters with checkpointing.
  const LoopConfig recipe = LoopConfig::load(CUSET_SOURCE_DIR "/configs/loop-7b-lora.yaml");
  EXPECT_EQ(recipe.backend, "cuda");
  EXPECT_EQ(recipe.objectives.size(), 5u);
  for (const auto& o : recipe.objectives) {
    const TrainConfig t = TrainConfig::parse(recipe.trainYaml(o, 1, "t.jsonl"), "recipe", CUSET_SOURCE_DIR "/configs");
    ASSERT_TRUE(t.adapter.has_value()) << o.name;
    EXPECT_EQ(t.adapter->r, 16);
    EXPECT_TRUE(t.activationCheckpointing);
    EXPECT_EQ(t.batchSize, 64);
  }
}

TEST_F(Loop, RunsEveryStageResumesAndRefusesChangedSettings) {
  test::TempDir dir;
  test::writeText(dir / "loop.yaml", microLoop("out: out\nbase: {steps: 2}\n"));
  LoopConfig config = LoopConfig::load(dir / "loop.yaml");
  EXPECT_EQ(config.outDir, dir / "out");
  ASSERT_EQ(planLoopRuns(config).size(), 8u);  // (untrained, base, sft, cuset-q3) x 2 seeds

  const LoopSummary first = runLoop(config, {.showProgress = false});
  // data + the warm start + (init, generate, eval) of the baseline + (generate, eval) of the warm
  // start's rows + (train, generate, eval) of each objective, per seed
  EXPECT_EQ(first.stagesRun, 1u + 1u + 2u * 3u + 2u * 2u + 4u * 3u);
  EXPECT_EQ(first.stagesSkipped, 0u);
  const json c = json::parse(test::readText(first.reportJson));
  ASSERT_EQ(c["objectives"].size(), 4u);
  EXPECT_EQ(c["objectives"][0]["name"], "untrained");
  EXPECT_EQ(c["objectives"][1]["name"], "base");
  EXPECT_EQ(c["objectives"][3]["name"], "cuset-q3");
  // The objectives continue from the warm start, the baseline does not.
  const std::string tuned = test::readText(dir / "out/runs/sft-s1/train.yaml");
  EXPECT_NE(tuned.find((dir / "out/base/train/final").string()), std::string::npos) << tuned;
  EXPECT_EQ(test::readText(dir / "out/runs/untrained-s1/train.yaml").find("base/train/final"), std::string::npos);
  EXPECT_EQ(c["k"], 2);
  EXPECT_EQ(c["sets"]["unseen_family"], 1);
  EXPECT_EQ(c["sets"]["unseen_instance"], 2);
  EXPECT_EQ(c["sets"]["unseen_variant"], 1);
  for (const auto& o : c["objectives"]) {
    EXPECT_EQ(o["seeds"].size(), 2u) << o.dump();
    EXPECT_TRUE(o["metrics"]["all"].contains("pass@k")) << o.dump();
  }
  EXPECT_EQ(c["objectives"][2]["loss_curve"]["steps"], json({2, 4}));
  EXPECT_EQ(c["objectives"][1]["loss_curve"]["steps"], json({2}));  // the warm start's own curve
  EXPECT_FALSE(c["objectives"][0].contains("loss_curve"));          // the baseline is not trained
  for (const auto& r : c["runs"]) {
    if (r["evaluated"]) {
      EXPECT_TRUE(std::filesystem::exists(dir / "out" / r["report"].get<std::string>())) << r.dump();
    }
  }
  EXPECT_NE(test::readText(first.reportHtml).find("cuset-q3"), std::string::npos);
  // Each run's training config stands on its own.
  EXPECT_NE(test::readText(dir / "out/runs/cuset-q3-s2/train.yaml").find("quantile: 0.3"), std::string::npos);

  // Everything finished: nothing is redone.
  const LoopSummary again = runLoop(config, {.showProgress = false});
  EXPECT_EQ(again.stagesRun, 0u);
  EXPECT_EQ(again.stagesSkipped, first.stagesRun);

  // An interrupted evaluation and a lost generation: exactly those stages run again, and the
  // trained model is not touched.
  const auto weights = dir / "out/runs/sft-s2/train/final/model.safetensors";
  const auto trainedAt = std::filesystem::last_write_time(weights);
  std::filesystem::remove(dir / "out/state/sft-s1.eval.done");
  std::filesystem::remove(dir / "out/state/sft-s2.generate.done");
  std::filesystem::remove(dir / "out/state/sft-s2.eval.done");
  const LoopSummary resumed = runLoop(config, {.showProgress = false});
  EXPECT_EQ(resumed.stagesRun, 3u);
  EXPECT_EQ(std::filesystem::last_write_time(weights), trainedAt);
  EXPECT_EQ(json::parse(test::readText(resumed.reportJson))["runs"], c["runs"]);

  // Changed settings for a finished stage are refused rather than mixed into one comparison.
  config.evalSeed = 6;
  CUSET_EXPECT_THROW_WITH(runLoop(config, {.showProgress = false}), "untrained-s1.eval", "other settings", "changed: seed");
  config.evalSeed = 5;

  // A stage interrupted under other settings starts over instead of resuming foreign partial output.
  std::filesystem::remove(dir / "out/state/sft-s1.eval.done");
  test::writeText(dir / "out/state/sft-s1.eval.started", R"({"inputs": {"seed": 99}})");
  test::writeText(dir / "out/runs/sft-s1/eval/stale.txt", "from another setup");
  const LoopSummary restarted = runLoop(config, {.showProgress = false});
  EXPECT_EQ(restarted.stagesRun, 1u);
  EXPECT_FALSE(std::filesystem::exists(dir / "out/runs/sft-s1/eval/stale.txt"));
  EXPECT_EQ(json::parse(test::readText(restarted.reportJson))["runs"], c["runs"]);
}

}  // namespace
}  // namespace cuset
