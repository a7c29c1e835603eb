#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cuset/trainer/sensitivity_lexer.hpp"

namespace cuset {
namespace {

std::vector<std::pair<std::string, std::string>> labelled(std::string_view code, const std::vector<SensitiveSpan>& spans) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : spans) out.emplace_back(std::string(sensitivityCategoryName(s.category)), std::string(code.substr(s.start, s.end - s.start)));
  return out;
}

TEST(SensitivityLexer, MarksAGlobalIndexAndItsGuard) {
  const std::string code = "__global__ void k(float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 0;\n}";
  const auto got = labelled(code, SensitivityLexer().analyze(code));
  const std::vector<std::pair<std::string, std::string>> want = {
      {"qualifier", "__global__"}, {"builtin", "blockIdx.x"},  {"index", "blockIdx.x * blockDim.x + threadIdx.x"},
      {"builtin", "blockDim.x"},   {"builtin", "threadIdx.x"}, {"index", "i < n"}};
  EXPECT_EQ(got, want);
}

TEST(SensitivityLexer, CommentsStringsAndPreprocessorAreNeverSensitive) {
  const std::string code = "// __syncthreads();\n/* threadIdx.x */\n#define B blockDim.x\nconst char* s = \"atomicAdd\";\nint x = 1;";
  EXPECT_TRUE(SensitivityLexer().analyze(code).empty());
}

TEST(SensitivityLexer, ChatTextIsLexedOnlyInsideCodeFences) {
  const std::string chat = "Compute y = x * 2 for threadIdx values.\n```cuda\n__global__ void k() { __syncthreads(); }\n```\nDone; y = threadIdx.x.";
  const auto spans = SensitivityLexer().analyzeMarkdown(chat);
  const auto got = labelled(chat, spans);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{{"qualifier", "__global__"}, {"sync", "__syncthreads"}}));
  // Without fences the whole text is code.
  EXPECT_EQ(labelled("int i = threadIdx.x;", SensitivityLexer().analyzeMarkdown("int i = threadIdx.x;")).size(), 2u);
  // Prose that looks like an assignment stops at the end of its line.
  const std::string prose = "y = x * 0.5 * (1 + erf(x))\nint i = threadIdx.x;";
  EXPECT_EQ(labelled(prose, SensitivityLexer().analyze(prose)),
            (std::vector<std::pair<std::string, std::string>>{{"builtin", "threadIdx.x"}, {"index", "threadIdx.x"}}));
}

TEST(SensitivityLexer, TokenFlagsFollowByteOverlap) {
  const std::vector<SensitiveSpan> spans = {{4, 10, SensitivityCategory::sync}};
  EXPECT_EQ(sensitiveTokenFlags({{0, 4}, {3, 5}, {9, 12}, {10, 12}}, spans), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(parseSensitivityCategory("launch_bounds"), SensitivityCategory::launchBounds);
  EXPECT_FALSE(parseSensitivityCategory("nope"));
}

// Precision and recall per category on hand-labelled snippets (tests/trainer/data). A label is a
// (category, exact text) pair; predictions and labels are matched as multisets per snippet.
TEST(SensitivityLexer, HandLabelledSnippets) {
  std::ifstream in(std::string(CUSET_SOURCE_DIR) + "/tests/trainer/data/sensitivity_cases.jsonl");
  ASSERT_TRUE(in) << "missing hand-labelled cases";
  std::map<std::string, int> tp, fp, fn;
  std::string line;
  int cases = 0;
  std::string misses;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++cases;
    const auto j = nlohmann::json::parse(line);
    const std::string code = j["code"];
    std::multiset<std::pair<std::string, std::string>> want, got;
    for (const auto& s : j["spans"]) want.insert({s[0].get<std::string>(), s[1].get<std::string>()});
    for (auto& p : labelled(code, SensitivityLexer().analyze(code))) got.insert(p);
    for (const auto& p : got) {
      auto it = want.find(p);
      if (it != want.end()) {
        ++tp[p.first];
        want.erase(it);
      } else {
        ++fp[p.first];
        misses += fmt::format("case {}: unexpected {} '{}'\n", cases, p.first, p.second);
        if (j["spans"].empty()) ADD_FAILURE() << "case " << cases << " has no sensitive code, yet " << p.first << " '" << p.second << "' was marked";
      }
    }
    for (const auto& p : want) {
      ++fn[p.first];
      misses += fmt::format("case {}: missed {} '{}'\n", cases, p.first, p.second);
    }
  }
  EXPECT_GE(cases, 30);
  std::string table = "category        precision  recall  (tp fp fn)\n";
  int TP = 0, FP = 0, FN = 0;
  for (auto c : kAllSensitivityCategories) {
    const std::string n(sensitivityCategoryName(c));
    TP += tp[n];
    FP += fp[n];
    FN += fn[n];
    const double p = tp[n] + fp[n] ? double(tp[n]) / (tp[n] + fp[n]) : 1.0, r = tp[n] + fn[n] ? double(tp[n]) / (tp[n] + fn[n]) : 1.0;
    table += fmt::format("{:<15} {:>9.3f} {:>7.3f}  ({} {} {})\n", n, p, r, tp[n], fp[n], fn[n]);
  }
  const double precision = double(TP) / (TP + FP), recall = double(TP) / (TP + FN);
  std::cout << misses << table << fmt::format("all             {:>9.3f} {:>7.3f}  ({} {} {})\n", precision, recall, TP, FP, FN);
  EXPECT_GE(precision, 0.95);
  EXPECT_GE(recall, 0.95);
}

}  // namespace
}  // namespace cuset
