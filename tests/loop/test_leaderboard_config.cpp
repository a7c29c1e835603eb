// The leaderboard YAML: defaults, overrides, and one clear error per mistake.
#include <gtest/gtest.h>

#include "cuset/loop/leaderboard_config.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

LeaderboardConfig load(const test::TempDir& dir, const std::string& yaml) {
  std::filesystem::create_directories(dir / "suite");
  test::writeText(dir / "lb.yaml", yaml);
  return LeaderboardConfig::load(dir / "lb.yaml");
}

constexpr const char* kTwoModels = R"(name: nightly
problems: suite
k: 4
generation: {temperature: 0.5, max_tokens: 1000, concurrency: 3}
models:
  - name: served
    endpoint: http://localhost:8000/v1
    model: Qwen/Qwen2.5-Coder-7B-Instruct
    api_key_env: KEY
    top_p: 0.9
    price: {prompt_per_mtok: 0.5, completion_per_mtok: 1.5}
  - name: tiny
    checkpoint: runs/tiny/final
    max_tokens: 64
eval: {backend: cuda, trials: 5, seed: 9}
)";

TEST(LeaderboardConfig, DefaultsAndOverrides) {
  test::TempDir dir;
  const LeaderboardConfig c = load(dir, kTwoModels);
  EXPECT_EQ(c.name, "nightly");
  EXPECT_EQ(c.k, 4);
  EXPECT_EQ(c.problemsDir, dir / "suite");
  EXPECT_EQ(c.outDir, std::filesystem::path("runs") / "leaderboard-nightly");
  ASSERT_EQ(c.models.size(), 2u);
  const auto& served = c.models[0];
  EXPECT_TRUE(served.isEndpoint());
  EXPECT_EQ(served.servedModel, "Qwen/Qwen2.5-Coder-7B-Instruct");
  EXPECT_EQ(served.endpoint.apiKeyEnv, "KEY");
  EXPECT_EQ(served.endpoint.concurrency, 3);
  EXPECT_DOUBLE_EQ(served.temperature, 0.5);
  EXPECT_DOUBLE_EQ(served.topP, 0.9);
  EXPECT_EQ(served.maxTokens, 1000);
  EXPECT_EQ(served.prompt, PromptStyle::kernelbench);
  EXPECT_DOUBLE_EQ(*served.completionPricePerMTok, 1.5);
  const auto& tiny = c.models[1];
  EXPECT_FALSE(tiny.isEndpoint());
  EXPECT_EQ(tiny.checkpoint, dir / "runs/tiny/final");
  EXPECT_EQ(tiny.maxTokens, 64);
  EXPECT_EQ(tiny.prompt, PromptStyle::cuset);  // what the built-in model is trained on
  EXPECT_EQ(c.backend, "cuda");
  EXPECT_EQ(c.trials, 5);
  EXPECT_EQ(c.seed, 9u);
}

TEST(LeaderboardConfig, MistakesAreNamedWithFileFieldAndLine) {
  test::TempDir dir;
  const std::string head = "problems: suite\nmodels:\n";
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n    endpoint: http://x/v1\n    model: m\n    temprature: 0.1\n"), "lb.yaml", "temprature");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n    endpoint: http://x/v1\n"), "lb.yaml", "model");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n    endpoint: http://x/v1\n    model: m\n    checkpoint: c\n"), "not both");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n"), "needs 'endpoint'");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n    checkpoint: c\n  - name: a\n    checkpoint: d\n"), "used twice");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: ../a\n    checkpoint: c\n"), "names a folder");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n    checkpoint: c\n    concurrency: 4\n"), "endpoint models only");
  CUSET_EXPECT_THROW_WITH(load(dir, head + "  - name: a\n    checkpoint: c\n    prompt: chatml\n"),
                          "expected cuset, kernelbench or kernelbench-native");
  CUSET_EXPECT_THROW_WITH(load(dir, "problems: nowhere\nmodels: [{name: a, checkpoint: c}]\n"), "nowhere", "not a folder");
  CUSET_EXPECT_THROW_WITH(load(dir, "problems: suite\nmodels: []\n"), "at least one model");
  CUSET_EXPECT_THROW_WITH(load(dir, "problems: suite\nk: 0\nmodels: [{name: a, checkpoint: c}]\n"), "k", "1..1000");
  CUSET_EXPECT_THROW_WITH(load(dir, "problems: suite\nmodels: [{name: a, checkpoint: c}]\neval: {backend: gpu}\n"), "eval.backend");
  CUSET_EXPECT_THROW_WITH(load(dir, "problems: suite\nmodels: [{name: a, checkpoint: c\n"), "lb.yaml:");
}

}  // namespace
}  // namespace cuset
