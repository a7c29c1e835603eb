// `cuset refine`'s report from plain inputs: the correct rate after each round and the best kernels' speedups.
#include <gtest/gtest.h>

#include "cuset/reports/refine_report.hpp"

using nlohmann::json;

namespace cuset {
namespace {

json problem(const std::string& id, int rounds, std::optional<int> solvedIn, std::optional<double> speedup) {
  json p = {{"problem", id}, {"rounds", json::array()}, {"stop", "depth 3 reached"}, {"transcript", "transcripts/x.jsonl"}};
  for (int r = 1; r <= rounds; ++r) {
    json row = {{"round", r}, {"candidates", 2}, {"correct", solvedIn && r >= *solvedIn ? 1 : 0}, {"verdicts", {{"wrong_answer", 2}}}};
    if (speedup && solvedIn && r >= *solvedIn) row["best_speedup"] = *speedup;
    p["rounds"].push_back(row);
  }
  if (solvedIn) {
    p["best"] = {{"round", *solvedIn}, {"sample", 0}};
    if (speedup) p["best"]["speedup"] = *speedup;
  }
  return p;
}

TEST(RefineReport, CorrectRateIsCumulativeOverRoundsAndSpeedupsAreOverTheChosenKernels) {
  const json problems =
      json::array({problem("a", 1, 1, 2.0), problem("b", 3, 3, 0.5), problem("c", 3, std::nullopt, std::nullopt), problem("d", 2, 2, std::nullopt)});
  const json r = computeRefineReport(problems, {{"model", "m"}, {"requests", 7}, {"tokens", 900}});
  const json& rates = r["suite"]["correct_rate_after_round"];
  ASSERT_EQ(rates.size(), 3u);
  EXPECT_DOUBLE_EQ(rates[0]["rate"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(rates[1]["rate"].get<double>(), 0.5);  // a solved in round 1 stays solved
  EXPECT_DOUBLE_EQ(rates[2]["rate"].get<double>(), 0.75);
  EXPECT_EQ(r["suite"]["timed_best"], 2);
  EXPECT_DOUBLE_EQ(r["suite"]["mean_speedup"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(r["suite"]["geomean_speedup"].get<double>(), 1.0);
  const std::string md = renderRefineMarkdown(r);
  EXPECT_NE(md.find("| 3 | 3 | 75.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("mean speedup 1.25x, geomean 1.00x over 2 timed"), std::string::npos) << md;
  EXPECT_NE(md.find("| c | 3 |"), std::string::npos) << md;
  const std::string html = renderRefineHtml(r);
  EXPECT_NE(html.find("<a href=\"transcripts/x.jsonl\">a</a>"), std::string::npos);
}

TEST(RefineReport, WithoutGpuTimingThereIsNoSpeedup) {
  const json r = computeRefineReport(json::array({problem("a", 2, 2, std::nullopt)}), {{"model", "m"}});
  EXPECT_FALSE(r["suite"].contains("geomean_speedup"));
  EXPECT_NE(renderRefineHtml(r).find("no GPU timing"), std::string::npos);
}

}  // namespace
}  // namespace cuset
