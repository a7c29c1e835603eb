#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

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
