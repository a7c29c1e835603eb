// The leaderboard page from plain inputs: ranking, cost, verdict shares, failed models, comparison.
#include <gtest/gtest.h>

#include "cuset/reports/leaderboard_report.hpp"

using nlohmann::json;

namespace cuset {
namespace {

json summaryOf(const std::string& model, double pass1, double correctRate, std::optional<double> fast1, json verdicts) {
  json overall = {{"candidates", 8}, {"unsupported", 0}, {"problems", 4}, {"correct_rate", correctRate},
                  {"pass_at_k", {{"1", {{"value", pass1}, {"problems", 4}}}, {"2", {{"value", std::min(1.0, pass1 * 1.5)}, {"problems", 4}}}}},
                  {"verdicts", verdicts}};
  if (fast1) overall["fast_p"] = {{"0", *fast1}, {"1", *fast1}, {"1.5", *fast1 / 2}};
  return {{"models", {{model, {{"overall", overall}}}}}};
}

LeaderboardEntry entry(const std::string& name, json summary) {
  LeaderboardEntry e;
  e.name = name;
  e.source = {{"endpoint", "http://h/v1"}, {"model", name + "-served"}, {"prompt", "kernelbench"}};
  e.summary = std::move(summary);
  e.generation = {{"samples", 8}, {"failed", 0}, {"prompt_tokens", 2'000'000}, {"completion_tokens", 500'000}, {"usage_missing", 0}};
  e.report = "models/" + name + "/eval/report.html";
  return e;
}

TEST(LeaderboardReport, RanksByPassAt1WithoutTimingAndCountsCost) {
  LeaderboardInput in{"nightly", 2, "", {}, json::object()};
  in.entries.push_back(entry("weak", summaryOf("weak", 0.25, 0.25, std::nullopt, {{"correct", 2}, {"wrong_answer", 6}})));
  in.entries.push_back(entry("strong", summaryOf("strong", 0.75, 0.5, std::nullopt, {{"correct", 4}, {"compile_error", 4}})));
  LeaderboardEntry broken = entry("broken", json());
  broken.error = "endpoint http://h/v1: HTTP 401";
  in.entries.insert(in.entries.begin(), broken);
  in.entries[2].promptPricePerMTok = 1.0;
  in.entries[2].completionPricePerMTok = 4.0;
  const json l = computeLeaderboard(in);
  ASSERT_EQ(l["models"].size(), 3u);
  EXPECT_EQ(l["timing"], "none");
  EXPECT_EQ(l["models"][0]["model"], "strong");
  EXPECT_EQ(l["models"][0]["rank"], 1);
  EXPECT_DOUBLE_EQ(l["models"][0]["pass_at_k"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(l["models"][0]["cost"].get<double>(), 2.0 + 2.0);  // 2M prompt at 1 + 0.5M completion at 4
  EXPECT_DOUBLE_EQ(l["models"][0]["verdict_shares"]["compile_error"].get<double>(), 0.5);
  EXPECT_EQ(l["models"][1]["model"], "weak");
  EXPECT_FALSE(l["models"][1].contains("cost"));
  EXPECT_EQ(l["models"][2]["model"], "broken");  // not evaluated: last, with its error
  EXPECT_FALSE(l["models"][2]["evaluated"].get<bool>());
  EXPECT_FALSE(l["models"][2].contains("rank"));
  const std::string md = renderLeaderboardMarkdown(l);
  EXPECT_NE(md.find("| 1 | strong | 75.0% | 100.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("failed: endpoint http://h/v1: HTTP 401"), std::string::npos) << md;
  EXPECT_EQ(md.find("fast_1"), std::string::npos) << "no fast_p columns without GPU timing";
}

TEST(LeaderboardReport, TimedRunsRankByFast1First) {
  LeaderboardInput in{"gpu", 2, "", {}, json::object()};
  in.entries.push_back(entry("accurate", summaryOf("accurate", 0.9, 0.9, 0.1, {{"correct", 8}})));
  in.entries.push_back(entry("fast", summaryOf("fast", 0.5, 0.5, 0.4, {{"correct", 4}, {"wrong_answer", 4}})));
  const json l = computeLeaderboard(in);
  EXPECT_EQ(l["timing"], "gpu");
  EXPECT_EQ(l["models"][0]["model"], "fast");
  const std::string md = renderLeaderboardMarkdown(l);
  EXPECT_NE(md.find("fast_1 | fast_1.5"), std::string::npos);
  EXPECT_NE(md.find("| 1 | fast | 50.0% | 75.0% | 50.0% | 40.0% | 20.0% |"), std::string::npos) << md;
}

TEST(LeaderboardReport, AComparisonWithAWorseProblemIsARegression) {
  LeaderboardInput in{"nightly", 2, "runs/base", {}, json::object()};
  json s = summaryOf("m", 0.5, 0.5, std::nullopt, {{"correct", 4}});
  s["comparison"] = {{"counts", {{"worse", 1}, {"better", 0}, {"ambiguous", 0}, {"same", 3}, {"new", 0}, {"missing", 0}}},
                     {"problems", json::array({{{"model", "m"}, {"problem", "level1/relu"}, {"status", "worse"}}})}};
  in.entries.push_back(entry("m", s));
  const json l = computeLeaderboard(in);
  EXPECT_TRUE(l["regression"].get<bool>());
  EXPECT_EQ(l["compared_with"], "runs/base");
  EXPECT_NE(renderLeaderboardMarkdown(l).find("REGRESSION: worse 1"), std::string::npos);
}

TEST(LeaderboardReport, HtmlEscapesWhatModelsAndServersChose) {
  LeaderboardInput in{"<b>night</b>", 1, "", {}, json::object()};
  LeaderboardEntry e = entry("m", json());
  e.error = "HTTP 500: <script>alert(1)</script>";
  in.entries.push_back(e);
  const std::string html = renderLeaderboardHtml(computeLeaderboard(in));
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>night"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
}

// Per level (issue #35): each model's pass@1 and pass@k on each level's problems, as the JSON the
// page reads, a Markdown table, and an HTML table with a chart.
TEST(LeaderboardReport, EachModelIsShownPerLevel) {
  LeaderboardInput in{"kb", 2, "", {}, json::object()};
  auto withLevels = [](json s, const std::string& model, double level1, double level2) {
    auto group = [](double pass1, int problems) {
      return json{{"problems", problems}, {"pass_at_k", {{"1", {{"value", pass1}, {"problems", problems}}}, {"2", {{"value", pass1}, {"problems", problems}}}}}};
    };
    s["models"][model]["levels"] = {{"1", group(level1, 3)}, {"2", group(level2, 1)}};
    return s;
  };
  in.entries.push_back(entry("a", withLevels(summaryOf("a", 0.5, 0.5, std::nullopt, {{"correct", 4}}), "a", 2.0 / 3.0, 0.0)));
  in.entries.push_back(entry("b", withLevels(summaryOf("b", 0.25, 0.25, std::nullopt, {{"correct", 2}}), "b", 0.0, 1.0)));
  const json l = computeLeaderboard(in);
  ASSERT_EQ(l["levels"].size(), 2u);
  EXPECT_EQ(l["levels"][0]["level"], "1");
  ASSERT_EQ(l["levels"][0]["models"].size(), 2u);
  EXPECT_EQ(l["levels"][0]["models"][0]["model"], "a");  // leaderboard order
  EXPECT_NEAR(l["levels"][0]["models"][0]["pass_at_1"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_EQ(l["levels"][1]["models"][1]["model"], "b");
  EXPECT_DOUBLE_EQ(l["levels"][1]["models"][1]["pass_at_1"].get<double>(), 1.0);
  const std::string md = renderLeaderboardMarkdown(l);
  EXPECT_NE(md.find("| level 1 | a | 3 | 66.7% | 66.7% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| level 2 | b | 1 | 100.0% | 100.0% |"), std::string::npos) << md;
  const std::string html = renderLeaderboardHtml(l);
  EXPECT_NE(html.find("<table id=\"levels\">"), std::string::npos);
  EXPECT_NE(html.find("<figure id=\"levels-chart\"><svg"), std::string::npos);
}

}  // namespace
}  // namespace cuset
