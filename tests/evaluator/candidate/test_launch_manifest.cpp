#include <gtest/gtest.h>

#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "test_util.hpp"
#include <cstdint>

namespace cuset {
namespace {

Problem softmaxProblem() {
  return parseProblem(R"(name: softmax_rows
level: 1
sizes:
  small: {M: 64, N: 1000}
  full: {M: 4096, N: 8192}
inputs:
  x: {dtype: float32, shape: [M, N]}
outputs:
  y: {dtype: float32, shape: [M, N]}
reference: |
  def forward(x: Tensor) -> Tensor:
      return torch.softmax(x, dim=-1)
)",
                      "problem.yaml", ".");
}

std::string withManifest(const std::string& yaml) { return "// header line\n/*@cuset\n" + yaml + "*/\n__global__ void k() {}\n"; }

TEST(LaunchManifest, ParsesTheDesignExample) {
  const Problem p = softmaxProblem();
  auto m = parseLaunchManifest(withManifest(R"(launches:
  - kernel: softmax_rows
    grid: [M]
    block: [256]
    shared_bytes: 256 * 4
    args: [x, y, M, N, {size: M*N, type: int64}, ceil_div(N, 32)]
workspace:
  partial: {dtype: float32, shape: [M]}
)"),
                               p);
  ASSERT_TRUE(m.ok()) << m.error();
  ASSERT_EQ(m->launches.size(), 1u);
  EXPECT_EQ(m->kernelNames(), std::vector<std::string>{"softmax_rows"});
  EXPECT_EQ(m->firstLine, 2);
  ASSERT_EQ(m->workspace.size(), 1u);
  auto r = resolveLaunches(*m, p.sizes("full"));
  ASSERT_TRUE(r.ok()) << r.error();
  const ResolvedLaunch& l = (*r)[0];
  EXPECT_EQ(l.grid, (std::array<std::uint32_t, 3>{4096, 1, 1}));
  EXPECT_EQ(l.block, (std::array<std::uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(l.sharedBytes, 1024u);
  ASSERT_EQ(l.args.size(), 6u);
  EXPECT_EQ(l.args[0].kind, LaunchArg::Kind::buffer);
  EXPECT_EQ(l.args[1].buffer, "y");
  EXPECT_EQ(l.args[2].kind, LaunchArg::Kind::scalar);
  EXPECT_EQ(l.args[3].value, 8192);
  EXPECT_EQ(l.args[4].type, LaunchArg::ScalarType::int64);
  EXPECT_EQ(l.args[4].value, 4096LL * 8192);
  EXPECT_EQ(l.args[5].value, 256);
}

TEST(LaunchManifest, ScalarGridAndMultiDimensionalBlocks) {
  auto m = parseLaunchManifest(
      withManifest("launches:\n  - {kernel: \"tiled<float, 16>\", grid: \"ceil_div(N, 16)\", block: [16, 16], args: [x, y]}\n"), softmaxProblem());
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->launches[0].kernel, "tiled<float, 16>");
  EXPECT_EQ(m->launches[0].block.size(), 2u);
}

struct BadManifest {
  std::string yaml;
  std::string needle;
  friend void PrintTo(const BadManifest& c, std::ostream* os) { *os << '"' << c.needle << '"'; }
};

class LaunchManifestErrors : public ::testing::TestWithParam<BadManifest> {};

TEST_P(LaunchManifestErrors, AreClearInvalidSubmissions) {
  auto m = parseLaunchManifest(withManifest(GetParam().yaml), softmaxProblem());
  ASSERT_FALSE(m.ok()) << "accepted:\n" << GetParam().yaml;
  EXPECT_NE(m.error().find(GetParam().needle), std::string::npos) << m.error();
}

const std::string kLaunch = "launches:\n  - kernel: k\n    grid: [M]\n    block: [256]\n";

INSTANTIATE_TEST_SUITE_P(
    Malformed, LaunchManifestErrors,
    ::testing::Values(
        BadManifest{"launches: [\n", "invalid YAML"}, BadManifest{"- a\n", "must be a mapping"}, BadManifest{"launches: []\n", "at least one launch"},
        BadManifest{"launch:\n  - kernel: k\n", "unknown key"},
        BadManifest{kLaunch + "    args: [x, z]\n", "'z' is not an input, output, workspace buffer or size"},
        BadManifest{kLaunch + "    args: [x]\n", "output 'y' is never passed"},
        BadManifest{kLaunch + "    args: [x, y, M / (N - N)]\n", "division by zero"},
        BadManifest{kLaunch + "    args: [x, y, M*N*N*N]\n", "does not fit in int"},
        BadManifest{"launches:\n  - {kernel: k, grid: [M], block: [2048], args: [x, y]}\n", "block.x = 2048"},
        BadManifest{"launches:\n  - {kernel: k, grid: [M], block: [64, 64], args: [x, y]}\n", "4096 threads per block"},
        BadManifest{"launches:\n  - {kernel: k, grid: [M, M*N], block: [32], args: [x, y]}\n", "grid.y"},
        BadManifest{"launches:\n  - {kernel: k, grid: [M - 64], block: [32], args: [x, y]}\n", "with sizes 'small'"},
        BadManifest{"launches:\n  - {kernel: k, grid: [1, 1, 1, 1], block: [32], args: [x, y]}\n", "1 to 3 dimensions"},
        BadManifest{"launches:\n  - {kernel: k, grid: [M], block: [32], shared_bytes: 1000000, args: [x, y]}\n", "shared_bytes = 1000000"},
        BadManifest{"launches:\n  - {kernel: \"k; system()\", grid: [M], block: [32], args: [x, y]}\n", "is not a kernel name"},
        BadManifest{"launches:\n  - {kernel: k, grid: [Q], block: [32], args: [x, y]}\n", "'Q' is not a size name"},
        BadManifest{"launches:\n  - {kernel: k, grid: [M], block: [32], args: [x, y, {size: N, type: float}]}\n", "int32 (or int) or int64"},
        BadManifest{kLaunch + "    args: [x, y]\nworkspace:\n  x: {dtype: float32, shape: [M]}\n", "already used"},
        BadManifest{kLaunch + "    args: [x, y]\nworkspace:\n  w: {dtype: float32, shape: [M*N*N*N*N]}\n", "absurdly large"},
        BadManifest{"launches:\n  - {kernel: k, grid: ceil_div(N, 16), block: [32], args: [x, y]}\n", "must be quoted"}));

TEST(LaunchManifest, MissingOrUnclosedOrDuplicateBlock) {
  const Problem p = softmaxProblem();
  EXPECT_NE(parseLaunchManifest("__global__ void k() {}", p).error().find("no launch manifest"), std::string::npos);
  EXPECT_NE(parseLaunchManifest("/*@cuset\nlaunches: []\n", p).error().find("never closed"), std::string::npos);
  EXPECT_NE(parseLaunchManifest(withManifest(kLaunch + "    args: [x, y]\n") + "/*@cuset\n*/", p).error().find("more than one"), std::string::npos);
}

TEST(LaunchManifest, ErrorLinesPointIntoTheCandidateFile) {
  // The manifest starts on line 3 of the candidate; the bad field is on its 4th YAML line -> line 6.
  auto m = parseLaunchManifest(withManifest("launches:\n  - kernel: k\n    grid: [M]\n    block: [abc]\n    args: [x, y]\n"), softmaxProblem());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("manifest:6:"), std::string::npos) << m.error();
}

}  // namespace
}  // namespace cuset
