#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/reports/analysis_report.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/report_writer.hpp"
#include "cuset/reports/run_compare.hpp"
#include "cuset/reports/run_data.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

// A problem row of summary.json as the comparison reads it.
nlohmann::json problemRow(int n, int c, std::optional<double> medianMs = std::nullopt, std::optional<double> noise = std::nullopt) {
  nlohmann::json row = {{"level", 1}, {"n", n}, {"c", c}};
  if (medianMs) {
    row["fastest"] = {{"median_ms", *medianMs}};
    if (noise) row["fastest"]["noise"] = *noise;
  }
  return row;
}

nlohmann::json summaryOf(const std::map<std::string, nlohmann::json>& problems) {
  nlohmann::json rows = nlohmann::json::object();
  for (const auto& [id, row] : problems) rows[id] = row;
  return {{"models", {{"m", {{"problems", rows}}}}}};
}

std::map<std::string, std::string> statuses(const nlohmann::json& cmp) {
  std::map<std::string, std::string> out;
  for (const auto& row : cmp["rows"]) out[row["problem"]] = row["status"];
  return out;
}

TEST(RunCompare, CorrectnessAndTimingAgainstNoise) {
  const nlohmann::json base = summaryOf({
      {"lost", problemRow(1, 1)},
      {"gained", problemRow(1, 0)},
      {"same", problemRow(10, 5)},
      {"slight_drop", problemRow(10, 6)},
      {"big_drop", problemRow(50, 45)},
      {"slower", problemRow(1, 1, 1.0, 0.01)},
      {"within_noise", problemRow(1, 1, 1.0, 0.05)},
      {"faster", problemRow(1, 1, 1.0, 0.01)},
      {"noise_unknown", problemRow(1, 1, 1.0)},
      {"gone", problemRow(1, 1)},
  });
  const nlohmann::json current = summaryOf({
      {"lost", problemRow(1, 0)},
      {"gained", problemRow(1, 1)},
      {"same", problemRow(10, 5)},
      {"slight_drop", problemRow(10, 5)},  // z = -0.45: not significant
      {"big_drop", problemRow(50, 30)},    // z = -3.3
      {"slower", problemRow(1, 1, 1.2, 0.02)},
      {"within_noise", problemRow(1, 1, 1.03, 0.02)},
      {"faster", problemRow(1, 1, 0.8, 0.01)},
      {"noise_unknown", problemRow(1, 1, 1.5)},
      {"added", problemRow(1, 1)},
  });
  const nlohmann::json cmp = compareSummaries(base, current, "base-run");
  const auto s = statuses(cmp);
  EXPECT_EQ(s.at("lost"), "worse");
  EXPECT_EQ(s.at("gained"), "better");
  EXPECT_EQ(s.at("same"), "same");
  EXPECT_EQ(s.at("slight_drop"), "ambiguous");
  EXPECT_EQ(s.at("big_drop"), "worse");
  EXPECT_EQ(s.at("slower"), "worse");
  EXPECT_EQ(s.at("within_noise"), "same");
  EXPECT_EQ(s.at("faster"), "better");
  EXPECT_EQ(s.at("noise_unknown"), "ambiguous");
  EXPECT_EQ(s.at("gone"), "missing");
  EXPECT_EQ(s.at("added"), "new");
  EXPECT_EQ(cmp["counts"]["worse"], 3);
  EXPECT_EQ(cmp["rows"][0]["status"], "worse");  // regressions listed first
  EXPECT_TRUE(hasRegression(cmp));
  EXPECT_FALSE(hasRegression(compareSummaries(base, base, "same run")));
}

// Reruns of identical candidates: one flip from correct to failing is a regression even though the
// pass rate alone (2/2 -> 1/2) would not be significant.
TEST(RunCompare, IdenticalSourceFlipsAreDeterministic) {
  nlohmann::json b = problemRow(2, 2), c = problemRow(2, 1);
  b["sources"] = {{"h1", "correct"}, {"h2", "correct"}};
  c["sources"] = {{"h1", "correct"}, {"h2", "runtime_error"}};
  const auto cmp = compareSummaries(summaryOf({{"p", b}}), summaryOf({{"p", c}}), "base");
  EXPECT_EQ(cmp["rows"][0]["status"], "worse");
  EXPECT_NE(cmp["rows"][0]["why"].get<std::string>().find("1 identical candidate(s) no longer correct"), std::string::npos);
  const auto reverse = compareSummaries(summaryOf({{"p", c}}), summaryOf({{"p", b}}), "base");
  EXPECT_EQ(reverse["rows"][0]["status"], "better");
  // Without shared hashes the same rates are only ambiguous.
  b.erase("sources");
  EXPECT_EQ(compareSummaries(summaryOf({{"p", b}}), summaryOf({{"p", c}}), "base")["rows"][0]["status"], "ambiguous");
}

void writeRun(const std::filesystem::path& dir, const std::vector<EvalResult>& results, const std::string& tail = "") {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / "results.jsonl");
  for (const auto& r : results) out << toJson(r).dump() << "\n";
  out << tail;
  std::ofstream(dir / "run.json") << R"({"backend": "sim", "seed": "11", "started": "2026-11-29T00:00:00Z"})";
}

EvalResult simResult(const std::string& problem, std::int64_t sample, Verdict v, const std::string& reason = "") {
  EvalResult r;
  r.model = "m";
  r.problem = problem;
  r.sample = sample;
  r.verdict = v;
  r.reason = reason;
  r.backend = "sim";
  r.origin = "cands.jsonl:" + std::to_string(sample + 1);
  r.source = "/*@cuset\nlaunches: []\n*/\n__global__ void k() { /* </script><b> */ }\n";
  return r;
}

TEST(RunData, TruncatedAndMalformedLinesBecomeWarnings) {
  test::TempDir dir;
  writeRun(dir.path(), {simResult("level1/relu", 0, Verdict::correct), simResult("level1/relu", 1, Verdict::wrong_answer, "bad")},
           "{\"problem\": \"level1/relu\", \"sam");
  RunData run = loadRun(dir.path());
  EXPECT_EQ(run.results.size(), 2u);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("results.jsonl:3: truncated last record"), std::string::npos) << run.warnings[0];

  // A malformed line in the middle is skipped with its line number.
  test::writeText(dir / "results.jsonl", toJson(simResult("level1/relu", 0, Verdict::correct)).dump() + "\nnot json\n" +
                                             toJson(simResult("level1/relu", 1, Verdict::correct)).dump() + "\n");
  run = loadRun(dir.path());
  EXPECT_EQ(run.results.size(), 2u);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("results.jsonl:2: malformed record"), std::string::npos) << run.warnings[0];

  test::TempDir empty;
  try {
    loadRun(empty.path());
    FAIL() << "a folder without results.jsonl was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no results.jsonl"), std::string::npos);
  }
}

TEST(Renderers, JunitMarkdownAndHtmlCarryTheVerdicts) {
  const std::vector<EvalResult> results = {simResult("level1/relu", 0, Verdict::correct),
                                           simResult("level2/fused", 0, Verdict::wrong_answer, "y: 1 of 4 elements differ & <b>")};
  const nlohmann::json summary = computeSummary(results, {{"backend", "sim"}, {"seed", "3"}}, {"results.jsonl:9: truncated"});

  const std::string junit = renderJunit(summary, results);
  EXPECT_NE(junit.find(R"(<testsuites name="cuset" tests="2" failures="1")"), std::string::npos) << junit;
  EXPECT_NE(junit.find(R"(<testcase classname="m.level1" name="relu sample 0")"), std::string::npos) << junit;
  EXPECT_NE(junit.find(R"(message="wrong_answer: y: 1 of 4 elements differ &amp; &lt;b&gt;")"), std::string::npos) << junit;

  const std::string md = renderMarkdown(summary);
  EXPECT_NE(md.find("| level 1 | 1 | 1 | 100.0% | 100.0% | - | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("CPU simulator"), std::string::npos);
  EXPECT_NE(md.find("## Warnings"), std::string::npos);

  const std::string withAssets = renderHtml(summary, results, "window.hljs = {};", ".hljs{}");
  const std::string plain = renderHtml(summary, results, "", "");
  EXPECT_EQ(withAssets.find("assets-notice"), std::string::npos);
  EXPECT_NE(plain.find(R"(id="assets-notice")"), std::string::npos);
  for (const char* id : {R"(id="pass-at-k")", R"(id="fast-p")", R"(id="verdicts")", R"(id="problems")", R"(id="candidates")", R"(id="cand-1")"}) {
    EXPECT_NE(plain.find(id), std::string::npos) << id;
  }
  // Candidate text is escaped, so a source containing </script> cannot end the page's script.
  EXPECT_EQ(plain.find("</script><b>"), std::string::npos);
  EXPECT_NE(plain.find("&lt;/script&gt;&lt;b&gt;"), std::string::npos);
  EXPECT_NE(plain.find("no GPU timing"), std::string::npos);
  EXPECT_EQ(renderHtml(summary, results, "x = '</script>';", "").find("x = '</script>'"), std::string::npos);
}

TEST(AnalysisReport, RendersTablesChartsAndAnEscapedHeatMap) {
  const nlohmann::json a = {{"model", "m"},
                            {"data", "d.jsonl"},
                            {"samples", 1},
                            {"high_confidence", 0.9},
                            {"bins", 4},
                            {"sensitive", {{"counts", {1, 0, 0, 1}}, {"tokens", 2}, {"high_confidence_share", 0.5}, {"mean", 0.5}}},
                            {"other", {{"counts", {0, 1, 0, 0}}, {"tokens", 1}, {"high_confidence_share", 0.0}, {"mean", 0.3}}},
                            {"categories", {{"sync", {{"counts", {1, 0, 0, 0}}, {"tokens", 1}, {"high_confidence_share", 0.0}, {"mean", 0.1}}}}},
                            {"regions",
                             {{"threshold", 0.5},
                              {"gap", 2},
                              {"min_tokens", 2},
                              {"count", 1},
                              {"samples_with_regions", 1},
                              {"mean_length", 2.0},
                              {"median_length", 2},
                              {"categories", {{"sync", 1}}}}},
                            {"heatmap",
                             {{{"text", "a<b __syncthreads();"},
                               {"regions", 1},
                               {"tokens",
                                {{{"start", 0}, {"end", 3}, {"confidence", 0.2}, {"categories", nlohmann::json::array()}, {"region", -1}},
                                 {{"start", 4}, {"end", 17}, {"confidence", 0.1}, {"categories", {"sync"}}, {"region", 0}}}}}}}};
  const std::string html = renderAnalysisHtml(a);
  EXPECT_NE(html.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("a&lt;b"), std::string::npos);
  EXPECT_NE(html.find("class=\"s r\""), std::string::npos);
  EXPECT_NE(html.find("title=\"p = 0.100 · sync\""), std::string::npos);
  EXPECT_NE(html.find("1 regions in 1 of 1 samples"), std::string::npos);
}

TEST(ReportWriter, WritesFourFilesAndFlagsARegression) {
  test::TempDir dir;
  writeRun(dir / "base", {simResult("level1/relu", 0, Verdict::correct), simResult("level1/gelu", 0, Verdict::correct)});
  writeRun(dir / "now", {simResult("level1/relu", 0, Verdict::correct), simResult("level1/gelu", 0, Verdict::runtime_error, "crash")});
  const ReportOutcome plain = writeRunReports({.runDir = dir / "now", .assetsDir = dir / "no-assets"});
  EXPECT_EQ(plain.written.size(), 4u);
  EXPECT_FALSE(plain.regression);
  for (const char* name : {"summary.json", "summary.md", "junit.xml", "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir / "now" / name)) << name;
  const auto summary = nlohmann::json::parse(test::readText(dir / "now/summary.json"));
  EXPECT_EQ(summary["run"]["seed"], "11");
  EXPECT_FALSE(plain.assetsInlined);

  const ReportOutcome compared = writeRunReports({.runDir = dir / "now", .compareDir = dir / "base", .assetsDir = dir / "no-assets"});
  EXPECT_TRUE(compared.regression);
  EXPECT_EQ(compared.summary["comparison"]["counts"]["worse"], 1);
  EXPECT_NE(test::readText(dir / "now/summary.md").find("| worse | m | level1/gelu |"), std::string::npos);
  EXPECT_NE(test::readText(dir / "now/report.html").find(R"(id="comparison")"), std::string::npos);
}

}  // namespace
}  // namespace cuset
