#include <gtest/gtest.h>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

TEST(ExtractCode, PrefersTheLastBlockWithAManifest) {
  const std::string response =
      "Here is a first try:\n```cuda\n/*@cuset\nlaunches: []\n*/\n// v1\n```\nBetter:\n```cpp\n/*@cuset\nlaunches: []\n*/\n// v2\n```\n"
      "And a host harness:\n```cpp\nint main() {}\n```\n";
  auto code = extractCodeFromResponse(response);
  ASSERT_TRUE(code.ok());
  EXPECT_NE(code->find("// v2"), std::string::npos);
  EXPECT_EQ(code->find("int main"), std::string::npos);
}

TEST(ExtractCode, TakesAKernelBenchSolutionOverABareKernelBlock) {
  // A KernelBench answer: a cpp block with the kernel alone, then the whole solution in python.
  const std::string solution = "import torch\nsrc = '__global__ void k() {}'\nclass ModelNew(torch.nn.Module):\n    pass\n";
  auto code = extractCodeFromResponse("Here:\n```cpp\n__global__ void k() {}\n```\n```python\n" + solution + "```\n");
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code + "\n", solution);
  auto bare = extractCodeFromResponse(solution);  // no fences at all
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(*bare, solution);
}

TEST(ExtractCode, FallsBackToAKernelBlockAndHandlesTruncation) {
  auto kernel = extractCodeFromResponse("text\n```\n__global__ void k() {}\n```\n```python\nprint(1)\n```\n");
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(*kernel, "__global__ void k() {}");
  auto truncated = extractCodeFromResponse("```cuda\n/*@cuset\n*/\n__global__ void k() {");
  ASSERT_TRUE(truncated.ok());
  EXPECT_NE(truncated->find("__global__ void k() {"), std::string::npos);
  EXPECT_FALSE(extractCodeFromResponse("I cannot help with that.").ok());
  EXPECT_NE(extractCodeFromResponse("```python\nprint(1)\n```").error().find("none of the response's 1 code block"), std::string::npos);
}

TEST(ReadCandidates, JsonlWithMalformedLinesKeepsGoing) {
  test::TempDir dir;
  test::writeText(dir / "c.jsonl",
                  "{\"problem\": \"level1/relu\", \"sample\": 3, \"model\": \"m\", \"source\": \"A\"}\n"
                  "\n"
                  "{not json\n"
                  "{\"problem\": \"level1/relu\", \"response\": \"```cuda\\n/*@cuset*/ B\\n```\"}\n"
                  "[1, 2]\n"
                  "{\"problem\": \"level1/relu\"}\n"
                  "{\"problem\": 5, \"source\": \"x\"}\n"
                  "{\"problem\": \"level1/relu\", \"sample\": -1, \"source\": \"x\"}\n"
                  "{\"problem\": \"level1/relu\", \"sample\": 3, \"model\": \"m\", \"source\": \"dup\"}\n");
  const auto c = readCandidates(dir / "c.jsonl", "fallback");
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0].readError, "");
  EXPECT_EQ(c[0].sample, 3);
  EXPECT_EQ(c[0].model, "m");
  EXPECT_NE(c[1].readError.find("c.jsonl:3: malformed JSON"), std::string::npos) << c[1].readError;
  EXPECT_EQ(c[2].readError, "");
  EXPECT_EQ(c[2].model, "fallback");
  EXPECT_EQ(c[2].sample, 0);  // first free sample number for (fallback, level1/relu)
  EXPECT_EQ(c[2].source, "/*@cuset*/ B");
  EXPECT_NE(c[3].readError.find(":5: expected a JSON object"), std::string::npos);
  EXPECT_NE(c[4].readError.find(":6: needs a 'source' or a 'response'"), std::string::npos);
  EXPECT_NE(c[5].readError.find("'problem' must be a string"), std::string::npos);
  EXPECT_NE(c[6].readError.find("non-negative"), std::string::npos);
  EXPECT_NE(c[7].readError.find("duplicate candidate"), std::string::npos);
}

TEST(ReadCandidates, FolderOfCuFilesMapsPathsToProblems) {
  test::TempDir dir;
  test::writeText(dir / "level1/relu/solutions/a.cu", "A");
  test::writeText(dir / "level1/relu/solutions/b.cu", "B");
  test::writeText(dir / "level2/fused/x.cu", "X");
  test::writeText(dir / "stray.cu", "S");
  test::writeText(dir / "level1/relu/problem.yaml", "ignored");
  const auto c = readCandidates(dir.path(), "ref");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].problemId, "level1/relu");
  EXPECT_EQ(c[0].sample, 0);
  EXPECT_EQ(c[1].sample, 1);
  EXPECT_EQ(c[1].source, "B");
  EXPECT_EQ(c[2].problemId, "level2/fused");
  EXPECT_NE(c[3].readError.find("cannot tell which problem"), std::string::npos);
  EXPECT_EQ(c[0].model, "ref");
}

// A link inside the folder is a candidate like any file; one leading out of it (to /etc/passwd, to
// another user's files) is a read error, so its target never reaches a compile log or a report.
TEST(ReadCandidates, LinksOutsideTheFolderAreNotFollowed) {
  test::TempDir dir;
  test::writeText(dir / "outside/secret.cu", "SECRET");
  test::writeText(dir / "cands/level1/relu/a.cu", "A");
  std::filesystem::create_symlink(dir / "cands/level1/relu/a.cu", dir / "cands/level1/relu/b.cu");
  std::filesystem::create_symlink(dir / "outside/secret.cu", dir / "cands/level1/relu/c.cu");
  std::filesystem::create_symlink("../../../outside/secret.cu", dir / "cands/level1/relu/d.cu");
  std::filesystem::create_symlink("/etc/passwd", dir / "cands/level1/relu/e.cu");
  const auto c = readCandidates(dir / "cands", "m");
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].source, "A");
  EXPECT_EQ(c[1].source, "A");
  EXPECT_TRUE(c[1].readError.empty()) << c[1].readError;
  for (std::size_t i = 2; i < 5; ++i) {
    EXPECT_TRUE(c[i].source.empty()) << i;
    EXPECT_NE(c[i].readError.find("outside the candidates folder"), std::string::npos) << c[i].readError;
  }
}

TEST(ReadCandidates, MissingPathIsAnError) { EXPECT_THROW(readCandidates("/nonexistent/cands.jsonl", "m"), Error); }

TEST(ReadCandidates, OversizedSourceIsRejected) {
  test::TempDir dir;
  test::writeText(dir / "c.jsonl", "{\"problem\": \"p\", \"source\": \"" + std::string(kMaxCandidateSourceBytes + 1, 'a') + "\"}\n");
  const auto c = readCandidates(dir / "c.jsonl", "m");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].readError.find("byte limit"), std::string::npos);
  EXPECT_TRUE(c[0].source.empty());
}

}  // namespace
}  // namespace cuset
