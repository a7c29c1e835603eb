#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

const char* kValid = R"(name: softmax_rows
level: 1
tags: [reduction, softmax]
description: Row-wise softmax.
sizes:
  small: {M: 64, N: 1000}
  full:  {M: 4096, N: 8192}
inputs:
  x: {dtype: float32, shape: [M, N], init: {dist: normal, mean: 0, std: 1}}
outputs:
  y: {dtype: float32, shape: [M, N]}
reference: |
  def forward(x: Tensor) -> Tensor:
      return torch.softmax(x, dim=-1)
tolerance: {atol: 1.0e-5, rtol: 1.0e-5}
cost: {flops: 5*M*N, bytes: 8*M*N}
)";

Problem parse(const std::string& text) { return parseProblem(text, "p/problem.yaml", "p"); }

// Replaces the first occurrence of `from` in the valid problem with `to`.
std::string variant(const std::string& from, const std::string& to) {
  std::string s = kValid;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(ProblemParser, ParsesTheDesignExample) {
  const Problem p = parse(kValid);
  EXPECT_EQ(p.id, "level1/softmax_rows");
  EXPECT_EQ(p.tags, (std::vector<std::string>{"reduction", "softmax"}));
  ASSERT_EQ(p.sizeSets.size(), 2u);
  EXPECT_EQ(p.sizes("full").at("N"), 8192);
  ASSERT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(p.inputs[0].dtype, DType::float32);
  EXPECT_EQ(p.inputs[0].init.kind, Distribution::Kind::normal);
  EXPECT_EQ(*evaluateShape(p.outputs[0], p.sizes("small")), (std::vector<std::int64_t>{64, 1000}));
  EXPECT_DOUBLE_EQ(p.tolerance.atol, 1e-5);
  EXPECT_TRUE(p.toleranceGiven);
  EXPECT_EQ(*p.costFlops->evaluate(p.sizes("small")), 320000);
  EXPECT_FALSE(p.referenceInFloat64);
  CUSET_EXPECT_THROW_WITH(p.sizes("huge"), "no size set 'huge'", "small, full");
}

TEST(ProblemParser, DefaultsToleranceByLoosestOutputDtype) {
  std::string text = variant("tolerance: {atol: 1.0e-5, rtol: 1.0e-5}\n", "");
  const std::string output = "y: {dtype: float32";
  text.replace(text.find(output), output.size(), "y: {dtype: float16");
  const Problem p = parse(text);
  EXPECT_FALSE(p.toleranceGiven);
  EXPECT_DOUBLE_EQ(p.tolerance.rtol, defaultTolerance(DType::float16).rtol);
}

TEST(ProblemParser, MixDistributionNormalisesWeights) {
  const Problem p = parse(variant("{dist: normal, mean: 0, std: 1}",
                                  "{dist: mix, components: [{dist: normal, weight: 3}, {dist: uniform, low: -6, high: 6, weight: 1}]}"));
  const auto& d = p.inputs[0].init;
  ASSERT_EQ(d.kind, Distribution::Kind::mix);
  EXPECT_DOUBLE_EQ(d.components[0].weight, 0.75);
  EXPECT_DOUBLE_EQ(d.components[1].distribution.high, 6.0);
}

struct BadCase {
  const char* from;
  const char* to;
  std::vector<std::string> needles;
  friend void PrintTo(const BadCase& c, std::ostream* os) { *os << '"' << c.to << '"'; }
};

class ProblemParserErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ProblemParserErrors, NameFileFieldAndLine) {
  const BadCase& c = GetParam();
  std::vector<std::string> needles = c.needles;
  needles.push_back("p/problem.yaml");
  try {
    parse(variant(c.from, c.to));
    FAIL() << "accepted: " << c.to;
  } catch (const Error& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nmissing: " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ProblemParserErrors,
    ::testing::Values(
        BadCase{"level: 1", "level: one", {"field 'level'", "expected an integer", ":2:"}}, BadCase{"level: 1", "level: 0", {"between 1 and 9"}},
        BadCase{"name: softmax_rows", "name: soft max", {"field 'name'", "identifier"}},
        BadCase{"dtype: float32, shape: [M, N], init", "dtype: float64, shape: [M, N], init", {"inputs.x.dtype", "unknown dtype 'float64'", ":9:"}},
        BadCase{"shape: [M, N], init", "shape: [M, K], init", {"inputs.x.shape[1]", "'K' is not a size name"}},
        BadCase{"small: {M: 64, N: 1000}", "small: {M: 64}", {"sizes.full", "same size names"}},
        BadCase{"sizes:\n  small: {M: 64, N: 1000}\n  full:  {M: 4096, N: 8192}", "sizes: {}", {"field 'sizes'", "at least one size set"}},
        BadCase{"small: {M: 64, N: 1000}", "small: {M: -4, N: 1000}", {"sizes.small.M", ">= 1"}},
        BadCase{"full:  {M: 4096, N: 8192}", "full:  {M: 4000000000, N: 8000000000}", {"inputs.x.shape", "absurdly large"}},
        BadCase{"mean: 0, std: 1", "mean: 0, std: -1", {"inputs.x.init.std", ">= 0"}},
        BadCase{"dist: normal", "dist: gaussian", {"unknown distribution 'gaussian'"}},
        BadCase{"{dist: normal, mean: 0, std: 1}", "{dist: uniform, low: 2, high: 1}", {"low < high"}},
        BadCase{"tolerance: {atol: 1.0e-5, rtol: 1.0e-5}", "tolerence: {atol: 1.0e-5}", {"unknown key", "tolerence"}},
        BadCase{"atol: 1.0e-5", "atol: -1", {"tolerance.atol", ">= 0"}}, BadCase{"atol: 1.0e-5", "atol: 5", {"too loose"}},
        BadCase{"def forward(x: Tensor)", "def fwd(x: Tensor)", {"field 'reference'", "def forward"}},
        BadCase{"outputs:\n  y: {dtype: float32, shape: [M, N]}\n", "outputs: {}\n", {"at least one output"}},
        BadCase{"cost: {flops: 5*M*N", "cost: {flops: 5*M*Q", {"cost.flops", "'Q' is not a size name"}},
        BadCase{"sizes:", "sizes: [1, 2]\nold_sizes:", {"unknown key"}},
        BadCase{"  x: {dtype", "  M: {dtype", {"both a size name and a tensor name"}},
        BadCase{"name: softmax_rows\n", "name: softmax_rows\nname: again\n", {"duplicate key"}},
        BadCase{"dtype: float32, shape: [M, N], init: {dist: normal, mean: 0, std: 1}",
                "dtype: int64, shape: [M, N], init: {dist: randint, low: 0, high: V}",
                {"inputs.x.init.high", "'V' is not a size name"}},
        BadCase{"dtype: float32, shape: [M, N], init: {dist: normal, mean: 0, std: 1}",
                "dtype: int64, shape: [M, N], init: {dist: randint, low: N, high: M}",
                {"inputs.x.init", "with sizes 'small'", "low < high"}}));

TEST(ProblemParser, RandintBoundsMayBeSizeExpressions) {
  const Problem p = parse(variant("dtype: float32, shape: [M, N], init: {dist: normal, mean: 0, std: 1}",
                                  "dtype: int64, shape: [M, N], init: {dist: randint, low: 1, high: N - 1}"));
  const Distribution& d = p.inputs.front().init;
  EXPECT_EQ(d.describe(), "randint[1, N - 1)");
  EXPECT_EQ(d.resolvedFor(p.sizes("small"))->high, 999.0);
  EXPECT_EQ(d.resolvedFor(p.sizes("full"))->high, 8191.0);
  EXPECT_EQ(d.resolvedFor(p.sizes("full"))->low, 1.0);
}

TEST(ProblemParser, RejectsAYamlSyntaxErrorWithLine) {
  CUSET_EXPECT_THROW_WITH(parse("name: x\nlevel: [1\n"), "p/problem.yaml:", "invalid YAML");
  CUSET_EXPECT_THROW_WITH(parse("- just\n- a list\n"), "mapping at the top level");
}

TEST(ProblemSuite, LoadsFoldersAndKeepsErrorsPerProblem) {
  test::TempDir dir;
  test::writeText(dir / "level1/softmax_rows/problem.yaml", kValid);
  test::writeText(dir / "level1/broken/problem.yaml", "name: broken\nlevel: 1\n");
  test::writeText(dir / "level2/softmax_rows/problem.yaml", kValid);  // level mismatch with folder
  test::writeText(dir / "level1/other_name/problem.yaml", kValid);    // name mismatch with folder
  const ProblemSuite suite = ProblemSuite::load(dir.path());
  ASSERT_EQ(suite.problems().size(), 1u);
  EXPECT_NE(suite.find("level1/softmax_rows"), nullptr);
  EXPECT_EQ(suite.find("level1/nope"), nullptr);
  ASSERT_EQ(suite.loadErrors().size(), 3u);
  const std::string all = suite.loadErrors()[0] + suite.loadErrors()[1] + suite.loadErrors()[2];
  EXPECT_NE(all.find("broken/problem.yaml"), std::string::npos);
  EXPECT_NE(all.find("does not match its folder 'level2'"), std::string::npos);
  EXPECT_NE(all.find("does not match its folder 'other_name'"), std::string::npos);
  CUSET_EXPECT_THROW_WITH(suite.requireNoErrors(), "3 problem(s)", "failed to load");
}

TEST(ProblemSuite, MissingDirectoryIsAClearError) {
  CUSET_EXPECT_THROW_WITH(ProblemSuite::load("/nonexistent/problems"), "/nonexistent/problems", "not found");
}

TEST(ProblemSuite, BundledSuiteLoadsCleanly) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  EXPECT_TRUE(suite.loadErrors().empty()) << suite.loadErrors().front();
  std::map<int, std::size_t> perLevel;
  for (const auto& p : suite.problems()) ++perLevel[p.level];
  EXPECT_GE(perLevel[1], 30u);
  EXPECT_GE(perLevel[2], 20u);
  EXPECT_GE(perLevel[3], 10u);
  for (const auto& p : suite.problems()) {
    EXPECT_NE(p.findSizeSet("full"), nullptr) << p.id << " has no full sizes for GPU timing";
    EXPECT_TRUE(p.costFlops && p.costBytes) << p.id << " has no cost";
  }
}

}  // namespace
}  // namespace cuset
