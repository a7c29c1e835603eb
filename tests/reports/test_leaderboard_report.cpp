// The leaderboard page from plain inputs: ranking, cost, verdict shares, failed models, comparison.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "cuset/reports/leaderboard_report.hpp"

using nlohmann::json;

namespace cuset {
namespace {

json summaryOf(const std::string& model, double pass1, double correctRate, std::optional<double> fast1, json verdicts) {
  json overall = {{"candidates", 8},
                  {"unsupported", 0},
                  {"problems", 4},
                  {"correct_rate", correctRate},
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
  EXPECT_NE(md.find("| 1 | fast | 50.0% | 75.0% | 50.0% | – | 40.0% | 20.0% |"), std::string::npos) << md;
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
      return json{{"problems", problems},
                  {"pass_at_k", {{"1", {{"value", pass1}, {"problems", problems}}}, {"2", {{"value", pass1}, {"problems", problems}}}}}};
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

// A model judged on problems: summary rows and the candidates behind them. `cells` maps a problem to
// its samples' verdicts (and speedups, for a timed run's correct ones).
struct JudgedSample {
  std::string verdict;
  double speedup = 0;
};

LeaderboardEntry judged(const std::string& name, const std::map<std::string, std::vector<JudgedSample>>& cells, bool timed) {
  json rows = json::object();
  std::vector<EvalResult> results;
  int solved = 0;
  for (const auto& [id, samples] : cells) {
    json verdicts = json::object();
    int c = 0;
    double best = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      verdicts[samples[i].verdict] = verdicts.value(samples[i].verdict, 0) + 1;
      EvalResult r;
      r.problem = id;
      r.model = name;
      r.sample = static_cast<std::int64_t>(i);
      r.verdict = *parseVerdict(samples[i].verdict);
      if (r.verdict != Verdict::correct) r.reason = "y: 3 of 64 elements differ";
      r.source = "__global__ void k() {} // " + name + " " + id + (i == 0 ? "" : " sample " + std::to_string(i));
      r.sourceHash = "h-" + name + "-" + id + "-" + std::to_string(i);
      if (samples[i].verdict == "correct") {
        ++c;
        if (timed) {
          r.timingKind = "cuda_cupti";
          r.timingSamplesMs = {1.0 / samples[i].speedup};
          r.referenceTimingSamplesMs = {1.0};
          best = std::max(best, samples[i].speedup);
        }
      }
      results.push_back(r);
    }
    solved += c > 0;
    const int n = static_cast<int>(samples.size());
    json row = {
        {"level", id.starts_with("level2") ? 2 : 1}, {"n", n}, {"c", c}, {"verdicts", verdicts}, {"pass_at_k", {{"1", static_cast<double>(c) / n}}}};
    if (best > 0) row["best_speedup"] = best;
    rows[id] = row;
  }
  const double rate = static_cast<double>(solved) / static_cast<double>(cells.size());
  json summary = summaryOf(name, rate, rate, timed ? std::optional<double>(rate / 2) : std::nullopt, {{"correct", 1}});
  summary["models"][name]["problems"] = rows;
  summary["run"] = {{"environment", {{"git_revision", "abc1234"}}}};
  LeaderboardEntry e = entry(name, summary);
  e.results = std::move(results);
  return e;
}

LeaderboardInput gridInput(bool timed) {
  LeaderboardInput in{
      "kb", 2, "", {}, {{"problems", "problems"}, {"backend", timed ? "cuda" : "sim"}, {"sizes", "small"}, {"trials", 5}, {"eval_seed", 7}}};
  in.entries.push_back(judged("a",
                              {{"level1/relu", {{"correct", 2.0}, {"wrong_answer"}}},
                               {"level1/elu", {{"compile_error"}, {"wrong_answer"}}},
                               {"level2/gemm", {{"correct", 1.0}, {"correct", 4.0}}}},
                              timed));
  in.entries.push_back(judged("b",
                              {{"level1/relu", {{"correct", 1.0}, {"correct", 0.5}}},
                               {"level1/elu", {{"correct", 3.0}, {"timeout"}}},
                               {"level2/gemm", {{"runtime_error"}, {"compile_error"}}}},
                              timed));
  in.entries[0].promptPricePerMTok = 1.0;
  in.entries[0].completionPricePerMTok = 4.0;
  in.problems = {
      {"level1/relu", {{"name", "relu"}, {"tags", {"elementwise", "activation"}}, {"description", "ReLU"}, {"statement", "name: relu\n"}}}};
  return in;
}

// Per problem (issue #35): the grid's cells with the candidates behind them, the statements, head to
// head and what a solved problem cost, in leaderboard.json, leaderboard.md and the page.
TEST(LeaderboardReport, TheGridShowsEachModelsBestVerdictAndItsCandidates) {
  const json l = computeLeaderboard(gridInput(false));
  EXPECT_EQ(l["schema_version"], kLeaderboardSchemaVersion);
  ASSERT_EQ(l["problems"].size(), 3u);
  const json& elu = l["problems"][0];
  EXPECT_EQ(elu["id"], "level1/elu");
  EXPECT_EQ(elu["cells"]["a"]["best"], "wrong_answer") << "a wrong answer got further than a compile error";
  EXPECT_EQ(elu["cells"]["b"]["best"], "correct");
  EXPECT_EQ(elu["solved_by"], json::array({"b"}));
  const json& relu = l["problems"][1];
  EXPECT_EQ(relu["tags"], json::array({"elementwise", "activation"}));
  EXPECT_EQ(relu["solved_by"].size(), 2u);
  ASSERT_EQ(relu["cells"]["a"]["candidates"].size(), 2u);
  const json& candidate = l["candidates"][relu["cells"]["a"]["candidates"][1].get<std::size_t>()];
  EXPECT_EQ(candidate["model"], "a");
  EXPECT_EQ(candidate["problem"], "level1/relu");
  EXPECT_EQ(candidate["sample"], 1);
  EXPECT_EQ(candidate["verdict"], "wrong_answer");
  EXPECT_EQ(candidate["reason"], "y: 3 of 64 elements differ");
  EXPECT_EQ(l["sources"][candidate["source"].get<std::string>()], "__global__ void k() {} // a level1/relu sample 1");
  EXPECT_EQ(l["statements"]["level1/relu"], "name: relu\n");
  EXPECT_EQ(l["revision"], "abc1234");

  // a solves relu and gemm, b relu and elu; a's two solved problems cost 4.0 in all.
  const auto row = [&](const std::string& model) {
    for (const auto& r : l["models"]) {
      if (r["model"] == model) return r;
    }
    return json();
  };
  EXPECT_EQ(row("a")["solved"], 2);
  EXPECT_DOUBLE_EQ(row("a")["cost_per_solved"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(row("b")["tokens_per_solved"].get<double>(), 2'500'000.0 / 2);
  ASSERT_EQ(l["head_to_head"].size(), 1u);
  const json& pair = l["head_to_head"][0];
  const bool aFirst = pair["a"] == "a";
  EXPECT_EQ(pair[aFirst ? "a_only" : "b_only"], json::array({"level2/gemm"}));
  EXPECT_EQ(pair[aFirst ? "b_only" : "a_only"], json::array({"level1/elu"}));
  EXPECT_EQ(pair["both"], 1);
  EXPECT_EQ(pair["neither"], 0);
  EXPECT_FALSE(pair.contains("speedup_ratio")) << "no ratio without GPU timing";

  const std::string md = renderLeaderboardMarkdown(l);
  EXPECT_NE(md.find("| level1/elu | 1 | 1 | wrong_answer · 0/2 | 1/2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("## Head to head"), std::string::npos);
  EXPECT_NE(md.find("| a | – | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("## What these numbers cover"), std::string::npos);
  EXPECT_NE(md.find("| correctness trials | 5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| a | http://h/v1 | a-served | kernelbench |"), std::string::npos) << md;

  const std::string html = renderLeaderboardHtml(l);
  EXPECT_NE(html.find(R"(<a href="#cell=level1%2Felu|b">1/2</a>)"), std::string::npos);
  EXPECT_NE(html.find(R"(<a class="problem" href="#problem=level1%2Frelu">level1/relu</a>)"), std::string::npos);
  EXPECT_NE(html.find(R"(data-tags="|elementwise|activation|")"), std::string::npos);
  EXPECT_NE(html.find(R"(<table id="h2h-matrix">)"), std::string::npos);
  EXPECT_NE(html.find(R"(<figure id="cost-chart"><svg)"), std::string::npos);
  EXPECT_EQ(html.find(R"(id="fastp-chart")"), std::string::npos) << "no fast_p curve without GPU timing";
  EXPECT_NE(html.find(R"(<table id="settings">)"), std::string::npos);
  EXPECT_NE(html.find("evaluation seed 7"), std::string::npos);
  EXPECT_NE(html.find(R"(<script type="application/json" id="leaderboard-data">)"), std::string::npos);
}

TEST(LeaderboardReport, TimedBoardsCompareSpeedupsHeadToHead) {
  const json l = computeLeaderboard(gridInput(true));
  EXPECT_EQ(l["timing"], "gpu");
  const json& pair = l["head_to_head"][0];
  ASSERT_TRUE(pair.contains("speedup_ratio"));
  // relu is the one problem both solve: a's best 2.0x against b's best 1.0x.
  const double ratio = pair["a"] == "a" ? 2.0 : 0.5;
  EXPECT_DOUBLE_EQ(pair["speedup_ratio"]["geomean"].get<double>(), ratio);
  EXPECT_DOUBLE_EQ(pair["speedup_ratio"]["per_problem"]["level1/relu"].get<double>(), ratio);
  EXPECT_DOUBLE_EQ(l["problems"][2]["cells"]["a"]["best_speedup"].get<double>(), 4.0);
  const std::string html = renderLeaderboardHtml(l);
  EXPECT_NE(html.find(R"(<figure id="fastp-chart"><svg)"), std::string::npos);
  EXPECT_NE(html.find(R"(<figure id="speedup-chart"><svg)"), std::string::npos);
  EXPECT_NE(html.find("4.00x · 2/2"), std::string::npos);
  EXPECT_NE(renderLeaderboardMarkdown(l).find("| a | – | 1 (2.00x) |"), std::string::npos) << renderLeaderboardMarkdown(l);
}

TEST(LeaderboardReport, ACandidatesSourceCannotEndThePagesDataOrItsScript) {
  LeaderboardInput in = gridInput(false);
  in.entries[0].results[0].source = "</script><script>alert(1)</script><!-- ";
  in.problems["level1/relu"]["statement"] = "</script><img src=x onerror=alert(2)>";
  const std::string html = renderLeaderboardHtml(computeLeaderboard(in));
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<!-- "), std::string::npos);
  // The sources travel gzip'd in base64, one per problem (the browser test inflates and compares them).
  const std::string blob = R"(<script type="application/json" id="leaderboard-sources">)";
  const std::size_t at = html.find(blob) + blob.size();
  const json packed = json::parse(html.substr(at, html.find("</script>", at) - at));
  ASSERT_EQ(packed.size(), 3u);
  for (const auto& [problem, text] : packed.items()) {
    EXPECT_EQ(text.get<std::string>().find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="), std::string::npos)
        << problem;
  }
  // The data block is still one JSON document the script can parse.
  const std::string open = R"(<script type="application/json" id="leaderboard-data">)";
  const std::size_t begin = html.find(open) + open.size();
  const json data = json::parse(html.substr(begin, html.find("</script>", begin) - begin));
  EXPECT_EQ(data["statements"]["level1/relu"], "</script><img src=x onerror=alert(2)>");
}

}  // namespace
}  // namespace cuset
