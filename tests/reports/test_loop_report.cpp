#include <gtest/gtest.h>

#include "cuset/reports/loop_report.hpp"

namespace cuset {
namespace {

using nlohmann::json;

EvalResult result(const std::string& problem, int sample, bool correct, std::optional<double> speedup = std::nullopt) {
  EvalResult r;
  r.problem = problem;
  r.sample = sample;
  r.verdict = correct ? Verdict::correct : Verdict::wrong_answer;
  if (speedup) {
    r.timingKind = "cuda_cupti";
    r.timingSamplesMs = {1.0, 1.0};
    r.referenceTimingSamplesMs = {*speedup, *speedup};
  }
  return r;
}

LoopComparisonInput twoObjectives() {
  LoopComparisonInput in;
  in.name = "t";
  in.k = 2;
  in.problemSet = {{"level1/a", "unseen_instance"}, {"level1/b", "unseen_instance"}, {"level1/f", "unseen_family"}};
  in.objectives = {"untrained", "sft"};
  in.runs.push_back({"untrained", 1, "runs/untrained-s1", true, {result("level1/a", 0, false), result("level1/a", 1, false)}, {}});
  // sft seed 1: a solved by 1 of 2, b by 2 of 2, f by none.  seed 2: a 2/2, b missing entirely (interrupted).
  in.runs.push_back({"sft",
                     1,
                     "runs/sft-s1",
                     true,
                     {result("level1/a", 0, true), result("level1/a", 1, false), result("level1/b", 0, true), result("level1/b", 1, true),
                      result("level1/f", 0, false), result("level1/f", 1, false)},
                     {{10, 2.0}, {20, 1.0}}});
  in.runs.push_back({"sft", 2, "runs/sft-s2", true, {result("level1/a", 0, true), result("level1/a", 1, true)}, {{10, 3.0}, {20, 2.0}}});
  return in;
}

TEST(LoopReport, PassAtKPerSetWithSpreadOverSeeds) {
  const json c = computeLoopComparison(twoObjectives());
  EXPECT_FALSE(c["timed"].get<bool>());
  EXPECT_EQ(c["sets"]["unseen_instance"], 2);
  const json& sft = c["objectives"][1];
  EXPECT_EQ(sft["seeds"], json({1, 2}));
  // seed 1: pass@1 instances = (0.5 + 1) / 2 = 0.75, pass@2 = 1; seed 2: b counts as unsolved -> 0.5 and 0.5.
  EXPECT_NEAR(sft["metrics"]["unseen_instance"]["pass@1"]["values"][0].get<double>(), 0.75, 1e-12);
  EXPECT_NEAR(sft["metrics"]["unseen_instance"]["pass@1"]["values"][1].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(sft["metrics"]["unseen_instance"]["pass@k"]["mean"].get<double>(), 0.75, 1e-12);
  EXPECT_NEAR(sft["metrics"]["unseen_instance"]["pass@k"]["std"].get<double>(), std::sqrt(0.125), 1e-12);
  EXPECT_NEAR(sft["metrics"]["unseen_family"]["pass@k"]["mean"].get<double>(), 0.0, 1e-12);
  // all: seed 1 = (1 + 1 + 0) / 3, seed 2 = (1 + 0 + 0) / 3
  EXPECT_NEAR(sft["metrics"]["all"]["pass@k"]["mean"].get<double>(), 0.5, 1e-12);
  EXPECT_FALSE(sft["metrics"]["all"].contains("fast_1"));  // no GPU timing, no fast_p
  EXPECT_NEAR(sft["final_loss"]["mean"].get<double>(), 1.5, 1e-12);
  EXPECT_EQ(sft["loss_curve"]["mean"], json({2.5, 1.5}));
  EXPECT_EQ(c["objectives"][0]["metrics"]["all"]["pass@k"]["mean"], 0.0);

  const std::string md = renderLoopMarkdown(c);
  EXPECT_NE(md.find("| sft | 2 | "), std::string::npos) << md;
  EXPECT_NE(md.find("75.0 ± 35.4%"), std::string::npos) << md;
  EXPECT_NE(md.find("[report](runs/sft-s2/eval/report.html)"), std::string::npos) << md;
  const std::string html = renderLoopHtml(c);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("href=\"runs/sft-s1/eval/report.html\""), std::string::npos);
  EXPECT_NE(html.find("no GPU timing"), std::string::npos);
}

TEST(LoopReport, Fast1OnlyWithGpuTimings) {
  LoopComparisonInput in = twoObjectives();
  in.runs[1].results[0] = result("level1/a", 0, true, 1.5);  // correct and faster than the reference
  in.runs[1].results[2] = result("level1/b", 0, true, 0.5);  // correct but slower
  const json c = computeLoopComparison(in);
  EXPECT_TRUE(c["timed"].get<bool>());
  // seed 1: 1 fast of 6 candidates; seed 2: 0 of 6 (4 counted as missing).
  EXPECT_NEAR(c["objectives"][1]["metrics"]["all"]["fast_1"]["values"][0].get<double>(), 1.0 / 6.0, 1e-12);
  EXPECT_NE(renderLoopMarkdown(c).find("fast_1"), std::string::npos);
}

}  // namespace
}  // namespace cuset
