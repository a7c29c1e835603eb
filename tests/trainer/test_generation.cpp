#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/trainer/generation.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/tokenizer.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

// A tiny random model with a tokenizer learned from the bundled problems' descriptions.
std::filesystem::path tinyModelFolder(const test::TempDir& dir) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  std::vector<std::string> texts;
  for (const auto& p : suite.problems()) texts.push_back(renderProblemPrompt(p));
  const BpeTokenizer tokenizer = trainBpeTokenizer(texts, 320, {"<|endoftext|>", "<|im_start|>", "<|im_end|>"});
  torch::manual_seed(11);
  CausalLm model(ModelConfig::fromJson({{"model_type", "qwen2"},
                                        {"vocab_size", tokenizer.vocabSize()},
                                        {"hidden_size", 32},
                                        {"intermediate_size", 64},
                                        {"num_hidden_layers", 1},
                                        {"num_attention_heads", 4},
                                        {"num_key_value_heads", 2},
                                        {"tie_word_embeddings", true}},
                                       "tiny"));
  const auto folder = dir / "model";
  saveCheckpoint(model, folder);
  tokenizer.save(folder / "tokenizer.json");
  return folder;
}

// Generation over the bundled problems with the tiny model, writing `out` in `dir`.
GenerateOptions options(const test::TempDir& dir, int samples, int maxNewTokens, const std::string& out) {
  GenerateOptions o;
  o.modelDir = tinyModelFolder(dir);
  o.problemsDir = CUSET_PROBLEMS_DIR;
  o.samples = samples;
  o.maxNewTokens = maxNewTokens;
  o.showProgress = false;
  o.outFile = dir / out;
  return o;
}

TEST(Generation, WritesKCandidatesPerProblemThatTheEvaluatorReads) {
  test::TempDir dir;
  const GenerateOptions o = options(dir, 3, 16, "cands.jsonl");
  const GenerateSummary s = runGeneration(o);
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  EXPECT_EQ(s.problems, suite.problems().size());
  EXPECT_EQ(s.responses, 3 * suite.problems().size());
  const auto candidates = readCandidates(o.outFile, "unused");
  ASSERT_EQ(candidates.size(), s.responses);
  for (const auto& c : candidates) {
    EXPECT_NE(suite.find(c.problemId), nullptr) << c.problemId;
    EXPECT_EQ(c.model, "model");
    EXPECT_LT(c.sample, 3);
  }
}

TEST(Generation, TheKvCacheChangesNothingButSpeed) {
  test::TempDir dir;
  GenerateOptions o = options(dir, 2, 12, "cached.jsonl");
  o.temperature = 0.9;
  o.seed = 5;
  runGeneration(o);
  o.useKvCache = false;
  o.outFile = dir / "uncached.jsonl";
  runGeneration(o);
  EXPECT_EQ(test::readText(dir / "cached.jsonl"), test::readText(dir / "uncached.jsonl"));
}

TEST(Generation, Bfloat16GivesReadableCandidates) {
  test::TempDir dir;
  GenerateOptions o = options(dir, 2, 12, "bf16.jsonl");
  o.bf16 = true;
  const GenerateSummary s = runGeneration(o);
  EXPECT_EQ(readCandidates(o.outFile, "unused").size(), s.responses);
}

TEST(Generation, StopStringsCutResponses) {
  test::TempDir dir;
  GenerateOptions o = options(dir, 2, 40, "all.jsonl");
  runGeneration(o);
  // Cut at a stop string taken from the uncut output itself.
  const auto first = nlohmann::json::parse(test::readText(o.outFile).substr(0, test::readText(o.outFile).find('\n')));
  const std::string response = first["response"].get<std::string>();
  ASSERT_GT(response.size(), 6u);
  std::size_t at = response.size() / 2;
  while (at < response.size() && static_cast<unsigned char>(response[at]) >= 0x80) ++at;  // an ASCII character
  ASSERT_LT(at, response.size());
  const std::string stop = response.substr(at, 1);
  o.stopStrings = {stop};
  o.outFile = dir / "cut.jsonl";
  runGeneration(o);
  const auto cut = nlohmann::json::parse(test::readText(o.outFile).substr(0, test::readText(o.outFile).find('\n')));
  EXPECT_EQ(cut["response"].get<std::string>(), response.substr(0, response.find(stop)));
}

TEST(Generation, PromptCarriesTheProblemAndTheContract) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const std::string prompt = renderProblemPrompt(*suite.find("level1/softmax_rows"));
  for (const char* needle : {"Row-wise softmax", "x (float32, shape [M, N])", "y (float32", "M=64", "/*@cuset", "launches:"}) {
    EXPECT_NE(prompt.find(needle), std::string::npos) << needle;
  }
}

TEST(Generation, ImportedProblemsAreAskedKernelBenchStyle) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  Problem p = *suite.find("level1/softmax_rows");
  p.inputs.push_back({"fc.weight", DType::float32, {}, {}});
  p.origin = ProblemOrigin{"kernelbench",
                           "423217d",
                           1,
                           23,
                           "level1/23_Softmax.py",
                           "kernelbench_source.py",
                           "class Model(nn.Module):\n    def forward(self, x):\n        return torch.softmax(x, dim=1)\n"};
  const std::string prompt = renderProblemPrompt(p);
  for (const char* needle :
       {"kernelbench level 1 problem 23", "```python\nclass Model(nn.Module):", "training mode", "fc.weight (float32", "/*@cuset"}) {
    EXPECT_NE(prompt.find(needle), std::string::npos) << needle << "\n" << prompt;
  }
  EXPECT_EQ(prompt.find("Row-wise softmax"), std::string::npos) << "the Model source replaces the description";
}

}  // namespace
}  // namespace cuset
