// The two prompt styles, and docs/prompts.md showing exactly what is sent.
#include <gtest/gtest.h>

#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/trainer/problem_prompt.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

TEST(Prompts, CusetStyleIsTheTrainingPromptAsOneUserMessage) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const Problem& p = *suite.find("level1/relu");
  const auto chat = renderProblemChat(p, PromptStyle::cuset);
  ASSERT_EQ(chat.size(), 1u);
  EXPECT_EQ(chat[0].role, "user");
  EXPECT_EQ(chat[0].content, renderProblemPrompt(p));
}

TEST(Prompts, KernelBenchStyleHasTheTaskTheExampleAndTheProblem) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const auto chat = renderProblemChat(*suite.find("level1/relu"), PromptStyle::kernelbench);
  ASSERT_EQ(chat.size(), 2u);
  EXPECT_EQ(chat[0].role, "system");
  EXPECT_NE(chat[0].content.find("custom CUDA kernels"), std::string::npos);
  const std::string& user = chat[1].content;
  for (const char* needle : {"return a + b", "extern \"C\" __global__ void elementwise_add", "Elementwise ReLU", "x (float32, shape [M, N])",
                             "Implement it with CUDA kernels", "never the example values", "```cuda"}) {
    EXPECT_NE(user.find(needle), std::string::npos) << needle;
  }
  // The problem comes after the example.
  EXPECT_LT(user.find("elementwise_add"), user.find("Elementwise ReLU"));
}

TEST(Prompts, KernelBenchStyleShowsAnImportedModelsSource) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  Problem p = *suite.find("level1/relu");
  p.origin = ProblemOrigin{"kernelbench",
                           "423217d",
                           1,
                           19,
                           "level1/19_ReLU.py",
                           "kernelbench_source.py",
                           "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"};
  const std::string user = renderProblemChat(p, PromptStyle::kernelbench)[1].content;
  EXPECT_NE(user.find("```python\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n```"), std::string::npos) << user;
  EXPECT_NE(user.find("named by their PyTorch paths"), std::string::npos);
  EXPECT_EQ(user.find("Elementwise ReLU"), std::string::npos) << "the Model source replaces the description";
}

TEST(Prompts, StyleNamesRoundTrip) {
  for (auto style : {PromptStyle::cuset, PromptStyle::kernelbench}) EXPECT_EQ(parsePromptStyle(promptStyleName(style)), style);
  EXPECT_FALSE(parsePromptStyle("openai"));
}

// docs/prompts.md writes both styles out for level1/relu; it must be what the code sends.
TEST(Prompts, TheDocsShowWhatIsSent) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const std::string docs = test::readText(std::string(CUSET_SOURCE_DIR) + "/docs/prompts.md");
  for (auto style : {PromptStyle::cuset, PromptStyle::kernelbench}) {
    for (const auto& m : renderProblemChat(*suite.find("level1/relu"), style)) {
      EXPECT_NE(docs.find("````text\n" + m.content + "\n````"), std::string::npos)
          << "docs/prompts.md lacks the " << promptStyleName(style) << " " << m.role << " message; regenerate it with "
          << "`cuset problems prompt level1/relu --style " << promptStyleName(style) << "`:\n"
          << m.content;
    }
  }
}

}  // namespace
}  // namespace cuset
