#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <nlohmann/json.hpp>

#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/results/results_log.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

EvalResult result(std::int64_t sample, Verdict v = Verdict::compiled) {
  EvalResult r;
  r.problem = "level1/relu";
  r.model = "m";
  r.sample = sample;
  r.verdict = v;
  if (v != Verdict::compiled) r.reason = std::string("because");
  r.compileLog = "line1\nline2";
  r.timings.compileMs = 12.5;
  return r;
}

TEST(EvalResult, JsonRoundTrip) {
  const EvalResult r = result(4, Verdict::compile_error);
  const EvalResult back = evalResultFromJson(toJson(r));
  EXPECT_EQ(back.key(), r.key());
  EXPECT_EQ(back.verdict, Verdict::compile_error);
  EXPECT_EQ(back.reason, "because");
  EXPECT_EQ(back.compileLog, r.compileLog);
  EXPECT_DOUBLE_EQ(back.timings.compileMs, 12.5);
  CUSET_EXPECT_THROW_WITH(evalResultFromJson(nlohmann::json{{"problem", "p"}}), "result record");
  auto j = toJson(r);
  j["verdict"] = "great";
  CUSET_EXPECT_THROW_WITH(evalResultFromJson(j), "unknown verdict 'great'");
}

// Doubles equal as the record means them: NaN reads back as NaN, infinities with their sign.
bool sameDouble(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
bool sameDoubles(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), sameDouble);
}

// Every field of a record, written as results.jsonl writes it (text) and read back as every reader of
// it reads it (evalResultFromJson: resume, merge, reports), over random values with NaN and infinities
// among the doubles (a NaN once made the report drop the whole record as malformed).
TEST(EvalResult, EveryFieldRoundTripsThroughTheFileWithNaNAndInfinities) {
  std::mt19937_64 random(61);
  const std::array<double, 6> specials = {std::nan(""), INFINITY, -INFINITY, 0.0, -1.5e-300, 1e300};
  auto number = [&] { return random() % 3 == 0 ? specials[random() % specials.size()] : std::uniform_real_distribution<double>(-1e3, 1e3)(random); };
  auto numbers = [&] {
    std::vector<double> v(random() % 4);
    for (double& x : v) x = number();
    return v;
  };
  for (int round = 0; round < 200; ++round) {
    EvalResult r = result(static_cast<std::int64_t>(random() % 1000), static_cast<Verdict>(random() % 9));
    r.reason = round % 2 ? "a reason" : "";
    r.backend = "sim";
    r.origin = "batch.jsonl:3";
    r.sourceHash = "abc";
    r.source = "__global__ void k() {}";
    r.form = "kernelbench";
    r.libraryOps = {"aten::convolution"};
    r.compileCacheHit = round % 3 == 0;
    r.timings = {number(), number(), number(), number(), number(), number()};
    r.trials = static_cast<int>(random() % 7);
    r.nondeterministic = round % 5 == 0;
    OutputComparison c;
    c.output = "y";
    c.elements = 10;
    c.mismatches = 2;
    c.nonFiniteMismatches = 1;
    c.maxAbsError = number();
    c.maxRelError = number();
    c.firstMismatch = 3;
    c.firstMismatchIndex = {0, 3};
    c.firstGot = number();
    c.firstWant = number();
    c.toleranceUse = number();
    r.comparisons = {c};
    r.timingKind = round % 2 ? "cuda_cupti" : "cpu_simulator";
    r.timingSamplesMs = numbers();
    r.referenceTimingSamplesMs = numbers();
    if (round % 3 == 1 && !r.referenceTimingSamplesMs.empty()) r.referenceTimingKeptFrom = "2026-12-06T08:00:00Z";  // only with samples
    if (round % 2) r.kernelbenchTimingSamplesMs = numbers();
    if (round % 4 == 1) r.kernelbenchReferenceTimingSamplesMs = numbers();
    if (round % 4) r.peakFraction = number();
    r.flags = {"speedup_above_10x"};
    r.sizes = round % 2 ? std::vector<std::string>{"small", "large"} : std::vector<std::string>{"full"};
    r.kernelbench = KernelBenchCheck{.compiled = true,
                                     .correct = round % 3 == 0 ? std::nullopt : std::optional<bool>(round % 2 == 0),
                                     .trials = 5,
                                     .passed = 3,
                                     .maxDifference = numbers(),
                                     .avgDifference = numbers(),
                                     .issue = "Output mismatch",
                                     .gpu = "hopper",
                                     .correctAgainstExact = round % 2 ? std::optional<bool>(true) : std::nullopt,
                                     .disagreement = round % 2 ? "tf32_reference" : ""};
    r.staticFindings = {{"code_bypass", "try/except", true}};
    if (round % 2) r.device = 1;

    const nlohmann::json line = nlohmann::json::parse(dumpJson(toJson(r)));  // as written to and read from the file
    const EvalResult back = evalResultFromJson(line);
    EXPECT_EQ(dumpJson(toJson(back)), dumpJson(toJson(r))) << "round " << round;
    EXPECT_EQ(back.key(), r.key());
    EXPECT_EQ(back.verdict, r.verdict);
    EXPECT_TRUE(sameDouble(back.timings.runMs, r.timings.runMs));
    EXPECT_TRUE(sameDoubles(back.timingSamplesMs, r.timingSamplesMs));
    EXPECT_TRUE(sameDoubles(back.referenceTimingSamplesMs, r.referenceTimingSamplesMs));
    EXPECT_EQ(back.referenceTimingKeptFrom, r.referenceTimingKeptFrom);
    EXPECT_EQ(back.peakFraction.has_value(), r.peakFraction.has_value());
    if (r.peakFraction) EXPECT_TRUE(sameDouble(*back.peakFraction, *r.peakFraction));
    ASSERT_TRUE(back.kernelbench);
    EXPECT_EQ(back.kernelbench->correct, r.kernelbench->correct);
    EXPECT_TRUE(sameDoubles(back.kernelbench->maxDifference, r.kernelbench->maxDifference));
    EXPECT_TRUE(sameDoubles(back.kernelbench->avgDifference, r.kernelbench->avgDifference));
    EXPECT_EQ(back.kernelbench->gpu, "hopper");
    EXPECT_EQ(back.kernelbench->correctAgainstExact, r.kernelbench->correctAgainstExact);
    EXPECT_EQ(back.kernelbench->disagreement, r.kernelbench->disagreement);
    ASSERT_EQ(back.comparisons.size(), 1u);
    EXPECT_TRUE(sameDouble(back.comparisons[0].maxAbsError, c.maxAbsError));
    EXPECT_TRUE(sameDouble(back.comparisons[0].firstGot, c.firstGot));
    EXPECT_EQ(back.device, r.device);
    EXPECT_EQ(back.sizes, r.sizes);
    EXPECT_EQ(back.staticFindings.size(), 1u);
  }
  // Records written before NaN had a name hold `null` where a difference was NaN: read as NaN.
  nlohmann::json old = toJson(result(1, Verdict::wrong_answer));
  old["kernelbench"] = {{"compiled", true}, {"max_difference", {nullptr, 0.5}}, {"avg_difference", {nullptr}}};
  const EvalResult fromOld = evalResultFromJson(old);
  ASSERT_TRUE(fromOld.kernelbench);
  EXPECT_TRUE(std::isnan(fromOld.kernelbench->maxDifference[0]));
  EXPECT_EQ(fromOld.kernelbench->maxDifference[1], 0.5);
}

TEST(ResultsLog, AppendsResumesAndRefusesToOverwrite) {
  test::TempDir dir;
  const auto path = dir / "run/results.jsonl";
  {
    ResultsLog log(path, false);
    log.append(result(0));
    log.append(result(1));
    EXPECT_TRUE(log.contains(result(1).key()));
  }
  CUSET_EXPECT_THROW_WITH(ResultsLog(path, false), "already holds results", "--resume");
  ResultsLog resumed(path, true);
  EXPECT_EQ(resumed.previousResults().size(), 2u);
  EXPECT_TRUE(resumed.contains(result(0).key()));
  EXPECT_FALSE(resumed.contains(result(2).key()));
}

TEST(ResultsLog, ResumeCutsATornLastRecordAndKeepsTheRest) {
  test::TempDir dir;
  const auto path = dir / "results.jsonl";
  {
    ResultsLog log(path, false);
    log.append(result(0));
  }
  const std::string good = test::readText(path);
  test::writeText(path, good + "{\"problem\": \"level1/relu\", \"sam");  // killed mid-write
  {
    ResultsLog log(path, true);
    EXPECT_EQ(log.previousResults().size(), 1u);
    log.append(result(1));
  }
  ResultsLog again(path, true);
  EXPECT_EQ(again.previousResults().size(), 2u);
  EXPECT_EQ(test::readText(path).rfind(good, 0), 0u);  // the finished record is untouched
}

TEST(ResultsLog, CorruptMiddleRecordStopsResumeWithoutTouchingTheFile) {
  test::TempDir dir;
  const auto path = dir / "results.jsonl";
  test::writeText(path, "{garbage}\n");
  CUSET_EXPECT_THROW_WITH(ResultsLog(path, true), "results.jsonl:1", "corrupt record");
  EXPECT_EQ(test::readText(path), "{garbage}\n");
}

}  // namespace
}  // namespace cuset
