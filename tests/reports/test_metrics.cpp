#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/run_compare.hpp"

namespace cuset {
namespace {

TEST(PassAtK, MatchesHandComputedValues) {
  EXPECT_NEAR(*passAtK(5, 2, 1), 0.4, 1e-12);                         // c/n
  EXPECT_NEAR(*passAtK(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-12);         // 1 - C(7,5)/C(10,5)
  EXPECT_NEAR(*passAtK(4, 1, 2), 0.5, 1e-12);                         // 1 - C(3,2)/C(4,2)
  EXPECT_NEAR(*passAtK(20, 1, 10), 0.5, 1e-12);                       // 1 - C(19,10)/C(20,10)
  EXPECT_NEAR(*passAtK(200, 13, 10), 1.0 - 0.50244888526939, 1e-12);  // C(187,10)/C(200,10) = 0.50244888...
}

TEST(PassAtK, EdgeCases) {
  EXPECT_FALSE(passAtK(3, 1, 5));       // n < k: undefined, not 0
  EXPECT_EQ(*passAtK(10, 0, 5), 0.0);   // c = 0
  EXPECT_EQ(*passAtK(10, 10, 5), 1.0);  // c = n
  EXPECT_EQ(*passAtK(5, 3, 3), 1.0);    // n - c < k: every 3-subset holds a correct one
  EXPECT_FALSE(passAtK(5, 6, 1));       // c > n is not a tally
  // Large n stays finite and monotone where binomials would overflow a double.
  const double a = *passAtK(100000, 10, 10), b = *passAtK(100000, 20, 10);
  EXPECT_TRUE(std::isfinite(a) && a > 0 && a < b);
}

TEST(Metrics, GeomeanNoiseAndReasonClasses) {
  EXPECT_NEAR(*geometricMean({2.0, 8.0}), 4.0, 1e-12);
  EXPECT_NEAR(*geometricMean({0.5, 2.0, 1.0}), 1.0, 1e-12);
  EXPECT_FALSE(geometricMean({}));
  EXPECT_NEAR(*relativeNoise({9.0, 10.0, 11.0}), 0.1, 1e-12);
  EXPECT_FALSE(relativeNoise({1.0}));
  EXPECT_EQ(reasonClass("trial 3 of 5: y: 12 of 64000 elements differ (0.019%); first at [3, 17]: got nan, want 0.25"),
            "y: N of N elements differ (N); first at [...]");
  EXPECT_EQ(reasonClass("trial 1 of 5: y: 1 of 8 elements differ (12.5%); first at [7]: got 1e+30, want -2"),
            reasonClass("trial 4 of 5: y: 3 of 9 elements differ (33%); first at [0]: got 0, want 1"));
}

EvalResult result(std::string model, std::string problem, std::int64_t sample, Verdict v, std::string reason = "") {
  EvalResult r;
  r.model = std::move(model);
  r.problem = std::move(problem);
  r.sample = sample;
  r.verdict = v;
  r.reason = std::move(reason);
  r.backend = "cuda";
  return r;
}

EvalResult timed(EvalResult r, double candidateMs, double referenceMs) {
  r.timingKind = "cuda_cupti";
  r.timingSamplesMs = {candidateMs * 0.99, candidateMs, candidateMs * 1.01};
  r.referenceTimingSamplesMs = {referenceMs, referenceMs, referenceMs};
  return r;
}

TEST(Summary, GpuRunHasFastPSpeedupsAndALeaderboard) {
  const std::vector<EvalResult> results = {
      timed(result("a", "level1/relu", 0, Verdict::correct), 1.0, 2.0),  // 2x
      timed(result("a", "level1/relu", 1, Verdict::correct), 4.0, 2.0),  // 0.5x
      result("a", "level2/fused", 0, Verdict::wrong_answer, "trial 2 of 5: y: 3 of 9 elements differ (33%); first at [0]: got 1, want 2"),
      timed(result("a", "level2/fused", 1, Verdict::correct), 1.0, 8.0),  // 8x
      timed(result("b", "level1/relu", 0, Verdict::correct), 2.0, 2.0),   // 1x
      result("b", "level2/fused", 0, Verdict::compile_error, "error: expected ';'"),
  };
  const nlohmann::json s = computeSummary(results, {{"backend", "cuda"}, {"seed", "7"}}, {});
  EXPECT_EQ(s["schema_version"], kSummarySchemaVersion);
  EXPECT_EQ(s["timing"], "gpu");
  const auto& a = s["models"]["a"]["overall"];
  EXPECT_EQ(a["candidates"], 4);
  EXPECT_EQ(a["correct"], 3);
  // pass@1 averages per-problem c/n: (2/2 + 1/2) / 2
  EXPECT_NEAR(a["pass_at_k"]["1"]["value"].get<double>(), 0.75, 1e-12);
  EXPECT_FALSE(a["pass_at_k"].contains("5"));  // n < 5 everywhere
  // fast_p is a share of ALL candidates: speedups 2, 0.5, 8 over 4 candidates.
  EXPECT_NEAR(a["fast_p"]["0"].get<double>(), 0.75, 1e-12);
  EXPECT_NEAR(a["fast_p"]["1"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(a["fast_p"]["2"].get<double>(), 0.25, 1e-12);  // strictly greater than 2
  EXPECT_NEAR(a["geomean_speedup"].get<double>(), std::cbrt(2.0 * 0.5 * 8.0), 1e-9);
  EXPECT_EQ(a["verdicts"]["wrong_answer"], 1);
  EXPECT_EQ(a["top_reasons"]["wrong_answer"][0]["reason"], "y: N of N elements differ (N); first at [...]");
  EXPECT_NEAR(s["models"]["a"]["levels"]["2"]["pass_at_k"]["1"]["value"].get<double>(), 0.5, 1e-12);
  const auto& relu = s["models"]["a"]["problems"]["level1/relu"];
  EXPECT_NEAR(relu["best_speedup"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(relu["fastest"]["sample"], 0);
  EXPECT_TRUE(relu["fastest"].contains("noise"));
  // Model a: fast_1 = 0.5; model b: fast_1 = 0 (1x is not > 1).
  ASSERT_EQ(s["leaderboard"].size(), 2u);
  EXPECT_EQ(s["leaderboard"][0]["model"], "a");
  EXPECT_EQ(s["leaderboard"][1]["rank"], 2);
}

TEST(Summary, SimRunHasNoSpeedupFieldsAtAll) {
  EvalResult r = result("m", "level1/relu", 0, Verdict::correct);
  r.backend = "sim";
  r.timingKind = "cpu_simulator";
  r.timingSamplesMs = {5.0, 6.0};
  const nlohmann::json s = computeSummary({r}, {{"backend", "sim"}}, {"a warning"});
  EXPECT_EQ(s["timing"], "none");
  const auto& o = s["models"]["m"]["overall"];
  EXPECT_FALSE(o.contains("fast_p"));
  EXPECT_FALSE(o.contains("geomean_speedup"));
  EXPECT_FALSE(s["models"]["m"]["problems"]["level1/relu"].contains("best_speedup"));
  EXPECT_FALSE(s["leaderboard"][0].contains("fast_1"));
  EXPECT_EQ(s["warnings"][0], "a warning");
  EXPECT_FALSE(speedupOf(r));
}

// Imported problems show where they came from in every report (run.json's problem_origins).
TEST(Summary, ImportedProblemsCarryTheirOrigin) {
  const nlohmann::json origin = {{"suite", "kernelbench"}, {"file", "level1/19_ReLU.py"}, {"commit", "423217d"}};
  const nlohmann::json s = computeSummary({result("m", "level1/kb19_relu", 0, Verdict::correct), result("m", "level1/relu", 0, Verdict::correct)},
                                          {{"backend", "sim"}, {"problem_origins", {{"level1/kb19_relu", origin}}}}, {});
  EXPECT_EQ(s["models"]["m"]["problems"]["level1/kb19_relu"]["origin"], origin);
  EXPECT_FALSE(s["models"]["m"]["problems"]["level1/relu"].contains("origin"));
  const std::string md = renderMarkdown(s);
  EXPECT_NE(md.find("| `level1/kb19_relu` | kernelbench level1/19_ReLU.py @ 423217d |"), std::string::npos) << md;
  EXPECT_NE(renderHtml(s, {}, "", "").find("kernelbench level1/19_ReLU.py @ 423217d"), std::string::npos);
}

// KernelBench's defective problems are judged but left out of the headline metrics unless the run
// says include_defective; the coverage says what was counted, and what the backend could not judge.
TEST(Summary, FlaggedProblemsAreCountedApartAndCoverageSaysSo) {
  const std::vector<EvalResult> results = {result("m", "level1/kb19_relu", 0, Verdict::wrong_answer, "y: 1 of 8 elements differ"),
                                           result("m", "level2/kb9_zeros", 0, Verdict::correct),
                                           result("m", "level3/kb11_vgg16", 0, Verdict::unsupported, "no size set small enough to simulate")};
  const nlohmann::json origin = {{"suite", "kernelbench"}, {"file", "f.py"}, {"commit", "423217d"}};
  nlohmann::json run = {{"backend", "sim"},
                        {"problem_defects", {{"level2/kb9_zeros", {{"kind", "degenerate"}, {"reason", "a constant 0 passes"}}}}},
                        {"problem_origins", {{"level1/kb19_relu", origin}, {"level2/kb9_zeros", origin}, {"level3/kb11_vgg16", origin}}}};
  const nlohmann::json s = computeSummary(results, run, {});
  const auto& overall = s["models"]["m"]["overall"];
  EXPECT_EQ(overall["problems"], 2) << overall;  // relu and vgg16 (unsupported: n = 0)
  EXPECT_EQ(overall["correct"], 0) << "the degenerate problem's constant kernel is not counted";
  EXPECT_FALSE(s["models"]["m"]["levels"].contains("2"));
  EXPECT_TRUE(s["models"]["m"]["problems"]["level2/kb9_zeros"].contains("excluded"));
  const auto& cov = s["coverage"];
  EXPECT_EQ(cov["levels"]["all"], (nlohmann::json{{"problems", 3}, {"flagged", 1}, {"unsupported", 1}}));
  EXPECT_EQ(cov["levels"]["3"]["unsupported"], 1);
  EXPECT_EQ(cov["suites"]["kernelbench"]["commits"], nlohmann::json({"423217d"}));
  EXPECT_EQ(cov["flagged"]["level2/kb9_zeros"]["kind"], "degenerate");
  const std::string md = renderMarkdown(s);
  EXPECT_NE(md.find("Covers 3 problem(s) (level 1: 1, level 2: 1, level 3: 1); 3 from kernelbench @ 423217d."), std::string::npos) << md;
  EXPECT_NE(md.find("1 flagged defective"), std::string::npos) << md;
  EXPECT_NE(md.find("| `level2/kb9_zeros` | degenerate | a constant 0 passes |"), std::string::npos) << md;
  EXPECT_NE(renderHtml(s, {}, "", "").find("id=\"coverage\""), std::string::npos);

  run["include_defective"] = true;
  const nlohmann::json all = computeSummary(results, run, {});
  EXPECT_EQ(all["models"]["m"]["overall"]["correct"], 1);
  EXPECT_TRUE(all["coverage"]["include_defective"].get<bool>());
  EXPECT_NE(renderMarkdown(all).find("counted in the metrics"), std::string::npos);
}

// A run that drew k = 4 samples per problem reports pass@4 beside pass@1/5/10 (pass@5 and pass@10 are
// undefined for n = 4), in summary.json, Markdown and HTML.
TEST(Summary, PassAtTheSampledKIsReported) {
  std::vector<EvalResult> results;
  for (int s = 0; s < 4; ++s) {
    results.push_back(result("m", "level1/relu", s, s == 0 ? Verdict::correct : Verdict::wrong_answer, "y: 1 of 8 elements differ"));
    results.push_back(result("m", "level1/gelu", s, Verdict::wrong_answer, "y: 1 of 8 elements differ"));
  }
  const nlohmann::json s = computeSummary(results, {{"backend", "sim"}}, {});
  const auto& m = s["models"]["m"];
  EXPECT_EQ(m["pass_at_k_values"], nlohmann::json({1, 4, 5, 10}));
  EXPECT_EQ(m["samples_per_problem"]["min"], 4);
  ASSERT_TRUE(m["overall"]["pass_at_k"].contains("4"));
  EXPECT_NEAR(m["overall"]["pass_at_k"]["4"]["value"].get<double>(), 0.5, 1e-12);  // relu 1.0, gelu 0.0
  EXPECT_NEAR(m["overall"]["pass_at_k"]["1"]["value"].get<double>(), 0.125, 1e-12);
  EXPECT_FALSE(m["overall"]["pass_at_k"].contains("5"));
  EXPECT_NEAR(m["problems"]["level1/relu"]["pass_at_k"]["4"].get<double>(), 1.0, 1e-12);

  const std::string md = renderMarkdown(s);
  EXPECT_NE(md.find("| pass@1 | pass@4 | pass@5 | pass@10 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 12.5% | 50.0% | - | - |"), std::string::npos) << md;
  const std::string html = renderHtml(s, results, "", "");
  EXPECT_NE(html.find("<th class=\"num\">pass@4</th>"), std::string::npos);
  EXPECT_NE(html.find("4 samples per problem."), std::string::npos);
}

// Unsupported candidates (the harness cannot run them here) are counted apart, outside every rate,
// said so in the Markdown, and a problem with nothing else is "not judged" in a comparison.
TEST(Summary, UnsupportedCandidatesAreCountedApartAndNotJudged) {
  std::vector<EvalResult> base, current;
  for (int s = 0; s < 2; ++s) {
    base.push_back(result("m", "level1/relu", s, Verdict::correct));
    base.push_back(result("m", "level1/gemm", s, Verdict::correct));
    current.push_back(result("m", "level1/relu", s, s == 0 ? Verdict::correct : Verdict::unsupported, "the CPU simulator cannot run this kernel"));
    current.push_back(result("m", "level1/gemm", s, Verdict::unsupported, "the CPU simulator cannot run this kernel"));
  }
  const nlohmann::json b = computeSummary(base, {{"backend", "sim"}}, {});
  nlohmann::json c = computeSummary(current, {{"backend", "sim"}}, {});
  const auto& o = c["models"]["m"]["overall"];
  EXPECT_EQ(o["unsupported"], 3);
  EXPECT_EQ(o["candidates"], 1);
  EXPECT_DOUBLE_EQ(o["correct_rate"].get<double>(), 1.0);
  EXPECT_EQ(c["models"]["m"]["problems"]["level1/gemm"]["n"], 0);
  EXPECT_EQ(b["models"]["m"]["overall"]["unsupported"], 0);
  EXPECT_NE(renderMarkdown(c).find("3 candidate(s) unsupported: not judged"), std::string::npos) << renderMarkdown(c);

  const nlohmann::json cmp = compareSummaries(b, c, "base");
  EXPECT_EQ(cmp["counts"]["not_judged"], 1);
  for (const auto& row : cmp["rows"]) {
    if (row["problem"] == "level1/gemm") {
      EXPECT_EQ(row["status"], "not_judged") << row.dump();
    }
    if (row["problem"] == "level1/relu") {
      EXPECT_EQ(row["status"], "same") << row.dump();
    }
  }
  c["comparison"] = cmp;
  EXPECT_NE(renderHtml(c, current, "", "").find("not judged 1"), std::string::npos);
}

TEST(Summary, KernelBenchAgreementCountsTheTwoChecksCandidateByCandidate) {
  auto result = [](std::int64_t sample, Verdict verdict, std::optional<bool> kernelbench) {
    EvalResult r;
    r.model = "m";
    r.problem = "level1/kb19_relu";
    r.sample = sample;
    r.verdict = verdict;
    r.reason = verdict == Verdict::correct ? "" : "trial 2 of 5: outputs match, but the kernel modified its input 'x'";
    r.kernelbench = KernelBenchCheck{.compiled = true, .correct = kernelbench};
    return r;
  };
  std::vector<EvalResult> results{result(0, Verdict::correct, true), result(1, Verdict::hack_suspected, true),
                                  result(2, Verdict::wrong_answer, false), result(3, Verdict::sandbox_violation, std::nullopt)};
  results.push_back(result(4, Verdict::correct, false));
  results[1].kernelbench->disagreement = "cuset_checks";
  results[4].kernelbench->disagreement = "tf32_reference";
  results[0].staticFindings.push_back({"torch_computation_ops", "Uses torch computation op: torch.relu", false});
  const nlohmann::json a = kernelBenchAgreement(results);
  EXPECT_EQ(a["table"], (nlohmann::json{{"both_correct", 1}, {"kernelbench_only", 1}, {"cuset_only", 1}, {"neither", 1}}));
  EXPECT_EQ(a["not_reproduced"], 1);
  ASSERT_EQ(a["kernelbench_only"].size(), 1u);
  EXPECT_EQ(a["kernelbench_only"][0]["sample"], 1);
  EXPECT_EQ(a["kernelbench_only"][0]["verdict"], "hack_suspected");
  EXPECT_EQ(a["static_findings"]["warning"]["torch_computation_ops"], 1);
  ASSERT_EQ(a["cuset_only"].size(), 1u);
  EXPECT_EQ(a["cuset_only"][0]["sample"], 4);
  EXPECT_EQ(a["disagreements"], (nlohmann::json{{"cuset_checks", 1}, {"tf32_reference", 1}}));
  const nlohmann::json summary = computeSummary(results, nlohmann::json::object(), {});
  EXPECT_EQ(summary["kernelbench_agreement"], a);
  const std::string md = renderMarkdown(summary);
  EXPECT_NE(md.find("| **KernelBench correct** | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("modified its input 'x'"), std::string::npos);
  EXPECT_NE(md.find("| tf32_reference | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Passed by CuSeT, not by KernelBench"), std::string::npos) << md;
  EXPECT_TRUE(kernelBenchAgreement({}).is_null());  // a run without the check has no section
}

}  // namespace
}  // namespace cuset
