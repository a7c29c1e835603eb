// KernelBench's result files (eval_results.json, pass_at_k_results.json), field by field as its
// scripts (eval_from_generations.py, benchmark_eval_analysis.py) write and read them.
#include <gtest/gtest.h>

#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_files.hpp"
#include "cuset/evaluator/results/estimators.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// Two problems imported from KernelBench's level 1 (numbers 2 and 10: keys must come in numeric order).
ProblemSuite importedSuite(const test::TempDir& dir) {
  for (int number : {10, 2}) {
    const fs::path p = dir.path() / "suite" / "level1" / fmt::format("kb{}_op", number);
    test::writeText(p / "kernelbench_source.py", "import torch\n");
    test::writeText(p / "problem.yaml", fmt::format(R"(name: kb{0}_op
level: 1
sizes:
  small: {{N: 64}}
inputs:
  x: {{dtype: float32, shape: [N]}}
outputs:
  y: {{dtype: float32, shape: [N]}}
reference: |
  def forward(x: Tensor) -> Tensor:
      return x
origin: {{suite: kernelbench, commit: abc, level: 1, number: {0}, file: level1/{0}_Op.py, source: kernelbench_source.py}}
)",
                                                    number));
  }
  return ProblemSuite::load(dir.path() / "suite");
}

EvalResult result(const std::string& problem, std::int64_t sample, Verdict verdict) {
  EvalResult r;
  r.problem = problem;
  r.sample = sample;
  r.model = "m";
  r.verdict = verdict;
  r.trials = verdict == Verdict::correct ? 6 : 1;
  r.reason = verdict == Verdict::correct ? "" : "trial 1 of 5: something";
  return r;
}

TEST(KernelBenchFiles, PassAtKIsKernelBenchsUnbiasedEstimator) {
  EXPECT_DOUBLE_EQ(passAtK(10, 0, 1).value(), 0.0);
  EXPECT_DOUBLE_EQ(passAtK(10, 3, 1).value(), 0.3);
  EXPECT_NEAR(passAtK(10, 3, 5).value(), 1.0 - (7.0 * 6 * 5 * 4 * 3) / (10.0 * 9 * 8 * 7 * 6), 1e-12);  // 1 - C(7,5)/C(10,5)
  EXPECT_DOUBLE_EQ(passAtK(4, 2, 3).value(), 1.0);                                                      // n - c < k
}

TEST(KernelBenchFiles, FastPCountsStrictlyFasterCorrectOnesOverAll) {
  const std::vector<std::optional<double>> speedups{2.0, 1.0, std::nullopt, 0.5};
  EXPECT_DOUBLE_EQ(kernelBenchFastP(speedups, 0.0), 0.75);
  EXPECT_DOUBLE_EQ(kernelBenchFastP(speedups, 1.0), 0.25);  // 1.0 is not strictly above 1.0
  EXPECT_DOUBLE_EQ(kernelBenchFastP(speedups, 2.0), 0.0);
}

TEST(KernelBenchFiles, EvalResultsHaveKernelBenchsSchema) {
  test::TempDir dir;
  const ProblemSuite suite = importedSuite(dir);
  EvalResult timed = result("level1/kb10_op", 0, Verdict::correct);
  timed.timingKind = "cuda_cupti";
  timed.timingSamplesMs = {1.0, 2.0, 3.0};
  timed.device = 1;
  timed.kernelbench = KernelBenchCheck{.compiled = true, .correct = true, .trials = 5, .passed = 5};
  EvalResult mutated = result("level1/kb10_op", 1, Verdict::hack_suspected);
  mutated.kernelbench = KernelBenchCheck{.compiled = true, .correct = true, .trials = 5, .passed = 5};
  EvalResult broken = result("level1/kb2_op", 0, Verdict::compile_error);
  broken.kernelbench = KernelBenchCheck{.compiled = false, .correct = false, .issue = "compilation_error: x"};
  const auto j = kernelBenchEvalResults(suite, {mutated, timed, broken, result("level1/other", 0, Verdict::correct)},
                                        KernelBenchHardware{.name = "NVIDIA H200", .gpu = true});
  ASSERT_EQ(j.size(), 2u);          // the problem not imported from KernelBench is left out
  EXPECT_EQ(j.begin().key(), "2");  // numeric order, not "10" < "2"
  const auto& samples = j["10"];
  ASSERT_EQ(samples.size(), 2u);
  const auto& s0 = samples[0];
  EXPECT_EQ(s0["sample_id"], 0);  // sorted by sample
  EXPECT_EQ(s0["compiled"], true);
  EXPECT_EQ(s0["correctness"], true);
  EXPECT_DOUBLE_EQ(s0["runtime"].get<double>(), 2.0);  // the mean, in ms
  const auto& stats = s0["runtime_stats"];
  for (const char* key : {"mean", "std", "min", "max", "num_trials", "hardware", "device"}) EXPECT_TRUE(stats.contains(key)) << key;
  EXPECT_NEAR(stats["std"].get<double>(), std::sqrt(2.0 / 3.0), 1e-12);  // numpy's (population) std
  EXPECT_EQ(stats["num_trials"], 3);
  EXPECT_EQ(stats["device"], "cuda:1");
  EXPECT_EQ(s0["metadata"]["hardware"], "NVIDIA H200");
  EXPECT_EQ(s0["metadata"]["cuset_verdict"], "correct");
  EXPECT_EQ(s0["metadata"]["kernelbench_correct"], true);
  const auto& s1 = samples[1];
  EXPECT_EQ(s1["correctness"], false);
  EXPECT_DOUBLE_EQ(s1["runtime"].get<double>(), -1.0);  // nothing timed
  EXPECT_TRUE(s1["runtime_stats"].empty());
  EXPECT_EQ(s1["metadata"]["correctness_issue"], "trial 1 of 5: something");
  EXPECT_EQ(s1["metadata"]["kernelbench_correct"], true);
  const auto& b = j["2"][0];
  EXPECT_EQ(b["compiled"], false);
  EXPECT_EQ(b["metadata"]["compilation_error"], "trial 1 of 5: something");
}

TEST(KernelBenchFiles, PassAtKResultsFollowCalculatePassAtK) {
  nlohmann::ordered_json evalResults = {
      {"1", {{{"sample_id", 0}, {"compiled", true}, {"correctness", true}}, {{"sample_id", 1}, {"compiled", true}, {"correctness", false}}}},
      {"2", {{{"sample_id", 0}, {"compiled", false}, {"correctness", false}}, {{"sample_id", 1}, {"compiled", true}, {"correctness", false}}}}};
  const auto j = kernelBenchPassAtKResults(evalResults, {1, 5});
  EXPECT_DOUBLE_EQ(j["problems"]["1"]["pass@1"].get<double>(), 0.5);
  EXPECT_EQ(j["problems"]["1"]["total_samples"], 2);
  EXPECT_EQ(j["problems"]["1"]["correct_samples"], 1);
  // k above the samples: KernelBench computes pass@n and files it under that n, so pass@5 is absent...
  EXPECT_TRUE(j["problems"]["1"].contains("pass@2"));
  EXPECT_FALSE(j["problems"]["1"].contains("pass@5"));
  // ...and its average counts no problem (over all of them).
  EXPECT_DOUBLE_EQ(j["averages"]["avg_pass@1"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["averages"]["avg_pass@5"].get<double>(), 0.0);
  const auto& m = j["metadata"];
  EXPECT_EQ(m["total_problems"], 2);
  EXPECT_EQ(m["problems_with_samples"], 2);
  EXPECT_EQ(m["total_evaluated_samples"], 4);
  EXPECT_EQ(m["total_correct_samples"], 1);
  EXPECT_EQ(m["pass@1_count"], 2);
  EXPECT_EQ(m["pass@5_count"], 0);
}

TEST(KernelBenchFiles, WritesOneLevelInTheRunFolderAndABaselineAnalysis) {
  test::TempDir dir;
  const ProblemSuite suite = importedSuite(dir);
  test::writeText(dir.path() / "baseline.json", R"({"level1": {"2_Op.py": {"mean": 4.0}, "10_Op.py": {"mean": 1.0}}})");
  EvalResult fast = result("level1/kb2_op", 0, Verdict::correct);
  fast.timingKind = "cuda_events";
  fast.timingSamplesMs = {2.0, 2.0};
  KernelBenchRunOptions options;
  options.baseline = dir.path() / "baseline.json";
  const auto files = writeKernelBenchResultFiles(
      dir.path() / "run", suite, {fast, result("level1/kb2_op", 1, Verdict::wrong_answer), result("level1/kb10_op", 0, Verdict::wrong_answer)},
      options, KernelBenchHardware{.name = "H200", .gpu = true});
  ASSERT_EQ(files.size(), 3u);
  EXPECT_TRUE(fs::exists(dir.path() / "run" / "eval_results.json"));
  EXPECT_TRUE(fs::exists(dir.path() / "run" / "pass_at_k_results.json"));  // two samples of one problem
  const auto analysis = nlohmann::json::parse(test::readText(dir.path() / "run" / "analysis_results.json"));
  EXPECT_DOUBLE_EQ(analysis["speedup_metrics"]["fast_p"]["1.0"].get<double>(), 0.5);  // 4/2 = 2x on one of two problems
  EXPECT_DOUBLE_EQ(analysis["speedup_metrics"]["fast_p"]["2.0"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(analysis["speedup_metrics"]["geometric_mean_speedup"].get<double>(), 2.0);
  EXPECT_EQ(analysis["summary"]["correct_count"], 1);
}

// A GPU run's reference timings become a KernelBench baseline of that machine
// (timing/<hardware>/baseline_time_torch.json, its results/timing/ format), which a later run's
// --kernelbench-baseline reads: the same speedups as live, without timing the references again.
TEST(KernelBenchFiles, AGpuRunWritesItsReferenceTimingsAsABaselineALaterRunReads) {
  test::TempDir dir;
  const ProblemSuite suite = importedSuite(dir);
  EvalResult timed = result("level1/kb2_op", 0, Verdict::correct);
  timed.timingKind = "cuda_cupti";
  timed.timingSamplesMs = {2.0, 2.0};
  timed.referenceTimingSamplesMs = {6.0, 6.0};
  timed.kernelbenchReferenceTimingSamplesMs = {7.0, 9.0};  // KernelBench's own method, where taken, is its baseline
  EvalResult untimed = result("level1/kb10_op", 0, Verdict::wrong_answer);
  const KernelBenchHardware hardware{.name = "NVIDIA H100 80GB HBM3", .gpu = true};
  const auto files = writeKernelBenchResultFiles(dir.path() / "first", suite, {timed, untimed}, KernelBenchRunOptions{}, hardware);
  const fs::path baseline = dir.path() / "first" / "timing" / "NVIDIA_H100_80GB_HBM3" / "baseline_time_torch.json";
  ASSERT_NE(std::find(files.begin(), files.end(), baseline), files.end());
  const auto written = nlohmann::json::parse(test::readText(baseline));
  ASSERT_EQ(written["level1"].size(), 1u);  // only problems whose reference was timed
  EXPECT_DOUBLE_EQ(written["level1"]["2_Op.py"]["mean"].get<double>(), 8.0);
  EXPECT_EQ(written["level1"]["2_Op.py"]["num_trials"], 2);
  EXPECT_EQ(written["level1"]["2_Op.py"]["hardware"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(written["level1"]["2_Op.py"]["method"], "cuda_event");

  KernelBenchRunOptions later;
  later.baseline = baseline;
  writeKernelBenchResultFiles(dir.path() / "second", suite, {timed, untimed}, later, hardware);
  const auto analysis = nlohmann::json::parse(test::readText(dir.path() / "second" / "analysis_results.json"));
  EXPECT_DOUBLE_EQ(analysis["speedup_metrics"]["geometric_mean_speedup"].get<double>(), 4.0);  // 8 ms / 2 ms
  EXPECT_EQ(analysis["not_in_baseline"], nlohmann::json::array({"10_Op.py"}));

  // Nothing timed on a GPU: no baseline file.
  const auto simulated = writeKernelBenchResultFiles(dir.path() / "sim", suite, {untimed}, KernelBenchRunOptions{}, KernelBenchHardware{});
  EXPECT_FALSE(fs::exists(dir.path() / "sim" / "timing"));
  EXPECT_EQ(simulated.size(), 1u);
}

}  // namespace
}  // namespace cuset
