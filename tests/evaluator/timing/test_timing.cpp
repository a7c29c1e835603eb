#include <gtest/gtest.h>

#include <cmath>

#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/timing/kernel_activity.hpp"
#include "cuset/evaluator/timing/sample_stats.hpp"
#include "cuset/evaluator/timing/speed_of_light.hpp"

namespace cuset {
namespace {

TEST(SampleStats, MedianMeanSpread) {
  const SampleStats s = computeStats({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_EQ(computeStats({}).count, 0u);
  EXPECT_DOUBLE_EQ(computeStats({7.0}).relStddev(), 0.0);
}

TEST(StoppingRule, ConvergesOnlyAfterMinimumSamplesAndTime) {
  StoppingRule rule;
  rule.minSamples = 10;
  rule.minTotalSeconds = 0.01;  // 10 ms of measured time
  rule.maxRelStddev = 0.005;
  SampleCollector c(rule);
  for (int i = 0; i < 9; ++i) {
    c.add(2.0);
    EXPECT_FALSE(c.shouldStop(0.1)) << "stopped after " << i + 1 << " samples";
  }
  c.add(2.0);
  EXPECT_EQ(c.shouldStop(0.1), StopReason::converged);

  // Quiet samples that do not add up to the minimum time keep going.
  SampleCollector tiny(rule);
  for (int i = 0; i < 20; ++i) tiny.add(0.0001);
  EXPECT_FALSE(tiny.shouldStop(0.1));
}

TEST(StoppingRule, NoisySamplesRunToTheTimeCap) {
  StoppingRule rule;
  rule.minTotalSeconds = 0.0;
  rule.maxWallSeconds = 2.0;
  SampleCollector c(rule);
  for (int i = 0; i < 50; ++i) c.add(i % 2 ? 1.0 : 1.2);  // ~9% noise
  EXPECT_FALSE(c.shouldStop(1.0));
  EXPECT_EQ(c.shouldStop(2.0), StopReason::timeCap);
  // A noisy warm-up does not keep a now-quiet measurement going: the rule looks at the recent half.
  SampleCollector settling(rule);
  for (int i = 0; i < 10; ++i) settling.add(i % 2 ? 1.0 : 3.0);
  for (int i = 0; i < 30; ++i) settling.add(1.0);
  EXPECT_EQ(settling.shouldStop(0.5), StopReason::converged);
  EXPECT_EQ(stopReasonName(StopReason::timeCap), "time_cap");
}

TEST(KernelActivity, BusyTimeIsTheUnionOfIntervals) {
  EXPECT_EQ(busyNanoseconds({{0, 10}, {20, 30}}), 20u);              // gap not counted
  EXPECT_EQ(busyNanoseconds({{0, 10}, {5, 15}}), 15u);               // overlap not double-counted
  EXPECT_EQ(busyNanoseconds({{0, 100}, {10, 20}, {30, 40}}), 100u);  // nested
  EXPECT_EQ(busyNanoseconds({{5, 5}, {9, 3}}), 0u);                  // empty and inverted records
}

TEST(KernelActivity, GroupsByIterationAndChecksRecordCounts) {
  const std::vector<KernelRecord> records = {
      {1000000, 2000000, 1, 7, "gemm"},
      {1500000, 2500000, 1, 8, "epilogue"},  // iteration 1: two streams, overlapping
      {5000000, 5500000, 2, 7, "gemm"},      // iteration 2: one of two launches
      {9000000, 9100000, 0, 7, "hidden"},    // outside any iteration
  };
  const ActivitySummary s = summariseActivity(records, 2, {1, 2}, 3);
  ASSERT_EQ(s.iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(s.iterations[0].busyMs, 1.5);
  EXPECT_DOUBLE_EQ(s.iterations[0].spanMs, 1.5);
  EXPECT_EQ(s.iterations[0].kernels, 2u);
  EXPECT_DOUBLE_EQ(s.iterations[1].busyMs, 0.5);
  ASSERT_EQ(s.problems.size(), 3u);
  EXPECT_NE(s.problems[0].find("dropped 3"), std::string::npos);
  EXPECT_NE(s.problems[1].find("iteration 2: 1 kernel record(s) for 2 launch(es)"), std::string::npos);
  EXPECT_NE(s.problems[2].find("outside any measured iteration"), std::string::npos);
}

TEST(KernelActivity, MismatchedIterationsAreOneProblem) {
  // Records that carry no iteration (external correlation missing) leave every iteration empty: one
  // line says so, not one per iteration of a measurement that runs thousands.
  std::vector<KernelRecord> records;
  std::vector<std::uint64_t> iterations;
  for (std::uint64_t i = 1; i <= 1000; ++i) {
    records.push_back({i * 10, i * 10 + 5, 0, 7, "k"});
    iterations.push_back(i);
  }
  const ActivitySummary s = summariseActivity(records, 1, iterations, 0);
  EXPECT_TRUE(s.iterations.empty());
  ASSERT_EQ(s.problems.size(), 2u);
  EXPECT_NE(s.problems[0].find("1000 of 1000 iterations"), std::string::npos) << s.problems[0];
  EXPECT_NE(s.problems[0].find("first: iteration 1: 0 kernel record(s) for 1 launch(es)"), std::string::npos) << s.problems[0];
  EXPECT_NE(s.problems[1].find("1000 kernel record(s) outside any measured iteration"), std::string::npos) << s.problems[1];
}

Problem costed(DType dtype, const char* flops, const char* bytes) {
  Problem p;
  p.id = "level1/x";
  p.sizeSets = {SizeSet{"full", {{"N", 1000}}}};
  p.inputs = {TensorSpec{.name = "x", .dtype = dtype}};
  p.costFlops = IntExpr::parseOrThrow(flops);
  p.costBytes = IntExpr::parseOrThrow(bytes);
  return p;
}

TEST(SpeedOfLight, RooflineAndViolation) {
  const DevicePeaks d{"test GPU", 1e12, 1e13, 1e12};                        // 1 TFLOP/s, 10 tensor TFLOP/s, 1 TB/s
  const Problem memoryBound = costed(DType::float32, "N", "1000 * N * N");  // 1e9 bytes -> 1 ms
  EXPECT_NEAR(*rooflineMs(memoryBound, "full", d), 1.0, 1e-12);
  const Problem computeBound = costed(DType::float32, "2 * N * N * N", "N");  // 2e9 flops -> 2 ms
  EXPECT_NEAR(*rooflineMs(computeBound, "full", d), 2.0, 1e-12);
  EXPECT_NEAR(*rooflineMs(costed(DType::bfloat16, "2 * N * N * N", "N"), "full", d), 0.2, 1e-12);  // tensor cores
  EXPECT_FALSE(rooflineMs(memoryBound, "small", d));

  EXPECT_FALSE(speedOfLightViolation(memoryBound, "full", d, 1.2));
  EXPECT_FALSE(speedOfLightViolation(memoryBound, "full", d, 0.85));  // within the 0.8 slack
  const auto violation = speedOfLightViolation(memoryBound, "full", d, 0.1);
  ASSERT_TRUE(violation);
  EXPECT_NE(violation->find("below the speed of light of test GPU"), std::string::npos) << *violation;
}

// The bundled suite's reference solutions on an H100 at their roofline would never be flagged.
TEST(SpeedOfLight, BundledProblemsHaveARoofline) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  for (const auto& p : suite.problems()) EXPECT_TRUE(rooflineMs(p, "full", h100Peaks())) << p.id;
}

}  // namespace
}  // namespace cuset
