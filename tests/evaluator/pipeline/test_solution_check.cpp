#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "cuset/evaluator/pipeline/solution_check.hpp"
#include "cuset/evaluator/suite/suite_table.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

TEST(SolutionExpectation, GoodSolutionsExpectCorrect) {
  const auto e = readSolutionExpectation("p/solutions/tiled.cu", "extern \"C\" __global__ void k() {}");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->verdict, Verdict::correct);
  EXPECT_FALSE(readSolutionExpectation("p/solutions/tiled.cu", "// @expect: wrong_answer\n"));
}

TEST(SolutionExpectation, BadSolutionsRecordVerdictAndReason) {
  const auto e =
      readSolutionExpectation("p/solutions/bad_oob.cu", "/*@cuset ... */\n// @expect: runtime_error  \n// @expect-reason: out-of-bounds write\n");
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->verdict, Verdict::runtime_error);
  EXPECT_EQ(e->reasonContains, "out-of-bounds write");
}

TEST(SolutionExpectation, TheSimulatorMayExpectMore) {
  const auto e = readSolutionExpectation("p/solutions/bad_tail.cu",
                                         "// @expect: wrong_answer\n// @expect-sim: runtime_error\n// @expect-sim-reason: out-of-bounds read\n");
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->verdict, Verdict::wrong_answer);
  ASSERT_TRUE(e->simVerdict.has_value());
  EXPECT_EQ(*e->simVerdict, Verdict::runtime_error);
  EXPECT_EQ(e->simReasonContains, "out-of-bounds read");
  EXPECT_FALSE(readSolutionExpectation("p/solutions/bad_tail.cu", "// @expect: wrong_answer\n// @expect-sim: correct\n"));
}

TEST(SolutionExpectation, BadSolutionWithoutOrWithABogusVerdictIsAnError) {
  const auto none = readSolutionExpectation("p/solutions/bad_x.cu", "__global__ void k() {}");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().find("bad_x.cu"), std::string::npos);
  EXPECT_NE(none.error().find("@expect"), std::string::npos);
  EXPECT_FALSE(readSolutionExpectation("p/solutions/bad_x.cu", "// @expect: wrong"));
  EXPECT_FALSE(readSolutionExpectation("p/solutions/bad_x.cu", "// @expect: correct"));
  EXPECT_FALSE(readSolutionExpectation("p/solutions/bad_x.cu", "// @expect: compiled"));
}

// Verdicts come from the eval results; a problem whose good solution fails, a bad solution that
// passes, a wrong reason, and a problem without any good solution all fail the check.
TEST(SolutionCheck, ComparesVerdictsWithExpectations) {
  test::TempDir dir;
  const std::string yaml = R"(name: NAME
level: 1
sizes: {small: {N: 4}, full: {N: 8}}
inputs: {x: {dtype: float32, shape: [N]}}
outputs: {y: {dtype: float32, shape: [N]}}
reference: |
  def forward(x: Tensor) -> Tensor:
      return x * 2
cost: {flops: N, bytes: 8*N}
)";
  auto write = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((dir.path() / rel).parent_path());
    std::ofstream(dir.path() / rel) << text;
  };
  for (const char* name : {"a", "b"}) {
    std::string y = yaml;
    y.replace(y.find("NAME"), 4, name);
    write(std::string("level1/") + name + "/problem.yaml", y);
  }
  write("level1/a/solutions/good.cu", "");
  write("level1/a/solutions/bad_tail.cu", "// @expect: wrong_answer\n// @expect-reason: differ\n");
  write("level1/a/solutions/bad_oob.cu", "// @expect: runtime_error\n");
  write("level1/b/solutions/bad_only.cu", "// @expect: compile_error\n");
  const ProblemSuite suite = ProblemSuite::load(dir.path());
  ASSERT_TRUE(suite.loadErrors().empty());

  auto result = [&](const std::string& rel, Verdict v, std::string reason) {
    EvalResult r;
    r.origin = (dir.path() / rel).string();
    r.verdict = v;
    r.reason = std::move(reason);
    return r;
  };
  const std::vector<EvalResult> results = {
      result("level1/a/solutions/good.cu", Verdict::correct, ""),
      result("level1/a/solutions/bad_tail.cu", Verdict::wrong_answer, "y: 1 of 4 elements differ"),
      result("level1/a/solutions/bad_oob.cu", Verdict::correct, ""),
      result("level1/b/solutions/bad_only.cu", Verdict::compile_error, "error: expected ';'"),
  };
  const auto rows = compareSolutionVerdicts(suite, results, BackendKind::sim);
  std::map<std::string, std::string> failures;
  for (const auto& r : rows) failures[r.problem + "/" + r.file] = r.failure;
  EXPECT_EQ(failures.at("level1/a/good.cu"), "");
  EXPECT_EQ(failures.at("level1/a/bad_tail.cu"), "");
  EXPECT_EQ(failures.at("level1/a/bad_oob.cu"), "expected runtime_error, got correct");
  EXPECT_EQ(failures.at("level1/b/bad_only.cu"), "");
  EXPECT_NE(failures.at("level1/b/").find("no solution judged correct"), std::string::npos);

  // On compile-only, runtime expectations are skipped and good solutions must compile.
  std::vector<EvalResult> compiled = results;
  compiled[0].verdict = Verdict::compiled;
  compiled[2].verdict = Verdict::compiled;
  compiled[1].verdict = Verdict::compiled;
  const auto compileRows = compareSolutionVerdicts(suite, compiled, BackendKind::compileOnly);
  for (const auto& r : compileRows) {
    if (r.file == "bad_tail.cu" || r.file == "bad_oob.cu") {
      EXPECT_TRUE(r.skipped && r.ok()) << r.file;
    }
    if (r.file == "good.cu") {
      EXPECT_TRUE(r.ok()) << r.failure;
    }
  }
  const std::string text = formatSolutionCheck(rows);
  EXPECT_NE(text.find("4 solution(s) checked (3 known-bad): 3 as expected, 1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("1 problem(s) without a solution judged correct"), std::string::npos) << text;
}

TEST(SuiteTable, RooflineIsTheSlowerOfComputeAndMemory) {
  Problem p;
  p.sizeSets = {SizeSet{"full", {{"N", 1000}}}};
  p.inputs = {TensorSpec{.name = "x", .dtype = DType::float32}};
  p.costFlops = IntExpr::parseOrThrow("67 * N * N * N");  // 6.7e10 flops: 1 ms at 67 TFLOP/s
  p.costBytes = IntExpr::parseOrThrow("N");
  EXPECT_NEAR(*h100RooflineMs(p, "full"), 1.0, 1e-9);
  p.costBytes = IntExpr::parseOrThrow("335 * N * N * N");  // 3.35e11 bytes: 100 ms
  EXPECT_NEAR(*h100RooflineMs(p, "full"), 100.0, 1e-9);
  p.inputs.front().dtype = DType::bfloat16;  // tensor-core peak: compute no longer dominates
  p.costBytes.reset();
  EXPECT_NEAR(*h100RooflineMs(p, "full"), 67.0 / 989.0, 1e-9);
  p.costFlops.reset();
  EXPECT_FALSE(h100RooflineMs(p, "full"));
}

TEST(SuiteTable, ReplacesOnlyBetweenTheMarkers) {
  const std::string doc = std::string("# Title\nintro\n") + std::string(kTableBegin) + "\nold\n" + std::string(kTableEnd) + "\ntail\n";
  const auto out = replaceGeneratedTable(doc, "| new |\n");
  ASSERT_TRUE(out);
  EXPECT_NE(out->find("intro"), std::string::npos);
  EXPECT_NE(out->find("| new |"), std::string::npos);
  EXPECT_EQ(out->find("old"), std::string::npos);
  EXPECT_NE(out->find("tail"), std::string::npos);
  EXPECT_EQ(*replaceGeneratedTable(*out, "| new |\n"), *out);  // idempotent
  EXPECT_FALSE(replaceGeneratedTable("no markers", "x"));
}

// The issue's sizing rule: `full` sizes are meant to take the reference about 1-15 ms on an
// H100-class GPU. The roofline is a lower bound on that time, so it must not exceed 15 ms, and an
// estimate far below 1 ms means the sizes are too small to time meaningfully.
TEST(SuiteTable, BundledFullSizesFitTheTimingWindow) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  for (const auto& p : suite.problems()) {
    const auto ms = h100RooflineMs(p, "full");
    ASSERT_TRUE(ms) << p.id;
    EXPECT_GE(*ms, 0.5) << p.id;
    EXPECT_LE(*ms, 15.0) << p.id;
  }
}

}  // namespace
}  // namespace cuset
