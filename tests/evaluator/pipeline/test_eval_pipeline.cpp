#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

const std::string kManifest = "/*@cuset\nlaunches:\n  - {kernel: relu_kernel, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}\n*/\n";
const std::string kGood = kManifest + "extern \"C\" __global__ void relu_kernel(const float* x, float* y, int n) {\n"
                                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";

std::string line(const std::string& problem, int sample, const std::string& source) {
  return nlohmann::json{{"problem", problem}, {"sample", sample}, {"model", "m"}, {"source", source}}.dump() + "\n";
}

std::string mixedBatch() {
  return line("level1/relu", 0, kGood) +
         line("level1/relu", 1, kManifest + "extern \"C\" __global__ void relu_kernel(float* x) { x[0] = nope; }") +
         line("level1/relu", 2, kManifest + "extern \"C\" __global__ void other(const float* x, float* y, int n) {}") +
         line("level1/relu", 3, "extern \"C\" __global__ void relu_kernel() {}") + line("level9/unknown", 0, kGood) +
         "this line is not json\n" +
         line("level1/relu", 4,
              "/*@cuset\nlaunches:\n  - {kernel: k, grid: [1], block: [32], shared_bytes: 200000, args: [x, y]}\n*/\n"
              "extern \"C\" __global__ void k(const float* x, float* y) { __shared__ float big[10000]; big[threadIdx.x] = x[0]; "
              "__syncthreads(); y[0] = big[3]; }");
}

EvalConfig configFor(const test::TempDir& dir) {
  EvalConfig c;
  c.problemsDir = CUSET_PROBLEMS_DIR;
  c.candidatesPath = dir / "batch.jsonl";
  c.outDir = dir / "run";
  c.cacheDir = dir / "cache";
  c.backend = BackendKind::compileOnly;
  c.jobs = 2;
  c.seed = 1234;
  c.showProgress = false;
  return c;
}

TEST(EvalPipeline, GivesEachCandidateOneVerdictWithAReason) {
  test::TempDir dir;
  test::writeText(dir / "batch.jsonl", mixedBatch());
  const EvalRunSummary s = runEvaluation(configFor(dir));
  ASSERT_EQ(s.results.size(), 7u);
  EXPECT_EQ(s.results[0].verdict, Verdict::compiled) << s.results[0].reason;
  EXPECT_EQ(s.results[1].verdict, Verdict::compile_error);
  EXPECT_NE(s.results[1].reason.find("nope"), std::string::npos) << s.results[1].reason;
  EXPECT_NE(s.results[1].compileLog.find("candidate.cu(5)"), std::string::npos) << s.results[1].compileLog;
  EXPECT_EQ(s.results[2].verdict, Verdict::invalid_submission);
  EXPECT_NE(s.results[2].reason.find("'relu_kernel'"), std::string::npos) << s.results[2].reason;
  EXPECT_EQ(s.results[3].verdict, Verdict::invalid_submission);
  EXPECT_NE(s.results[3].reason.find("no launch manifest"), std::string::npos);
  EXPECT_EQ(s.results[4].verdict, Verdict::invalid_submission);
  EXPECT_NE(s.results[4].reason.find("unknown problem id 'level9/unknown'"), std::string::npos);
  EXPECT_EQ(s.results[5].verdict, Verdict::invalid_submission);
  EXPECT_NE(s.results[5].reason.find("batch.jsonl:6"), std::string::npos);
  EXPECT_EQ(s.results[6].verdict, Verdict::invalid_submission);
  EXPECT_NE(s.results[6].reason.find("bytes of static"), std::string::npos) << s.results[6].reason;
  for (const auto& r : s.results) {
    if (!isSuccess(r.verdict)) {
      EXPECT_FALSE(r.reason.empty()) << r.key();
    }
  }
  EXPECT_EQ(s.counts.at(Verdict::invalid_submission), 5u);

  const std::string results = test::readText(dir / "run/results.jsonl");
  EXPECT_EQ(std::count(results.begin(), results.end(), '\n'), 7);
  const nlohmann::json run = readJsonFile(dir / "run/run.json");
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["seed"], "1234");
  EXPECT_EQ(run["backend"], "compile-only");
  EXPECT_EQ(run["verdict_counts"]["compiled"], 1);
  for (const char* key : {"nvrtc", "libtorch", "cuda_toolkit", "git_revision", "host"}) {
    EXPECT_TRUE(run["environment"].contains(key)) << key;
  }
}

TEST(EvalPipeline, ResumeSkipsFinishedCandidatesAndKeepsTheSeed) {
  test::TempDir dir;
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood));
  EvalConfig c = configFor(dir);
  runEvaluation(c);
  EXPECT_THROW(runEvaluation(c), Error);  // no silent overwrite

  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood) + line("level1/relu", 1, kGood));
  c.resume = true;
  c.seed.reset();
  const EvalRunSummary s = runEvaluation(c);
  EXPECT_EQ(s.skippedAsDone, 1u);
  EXPECT_EQ(s.evaluatedNow, 1u);
  EXPECT_EQ(s.results.size(), 2u);
  EXPECT_EQ(readJsonFile(dir / "run/run.json")["seed"], "1234");
  c.seed = 99;
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "records seed 1234", "--seed 99");
}

TEST(EvalPipeline, NoCacheNeverReusesASimLibrary) {
  test::TempDir dir;
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood));
  ::setenv("CUSET_WORKER", CUSET_BINARY, 1);
  EvalConfig c = configFor(dir);
  c.backend = BackendKind::sim;
  c.trials = 1;
  ASSERT_EQ(runEvaluation(c).results.at(0).verdict, Verdict::correct);

  // Spoil every cached library: a run that reads the cache can no longer judge the kernel correct.
  int spoiled = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "cache/sim")) {
    if (e.path().extension() == ".so") {
      test::writeText(e.path(), "not a library");
      ++spoiled;
    }
  }
  ASSERT_GT(spoiled, 0);
  c.outDir = dir / "cached";
  EXPECT_NE(runEvaluation(c).results.at(0).verdict, Verdict::correct);

  c.outDir = dir / "uncached";
  c.useCache = false;
  EXPECT_EQ(runEvaluation(c).results.at(0).verdict, Verdict::correct);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "cache/sim-uncached")) << "the run's own libraries outlived it";
}

TEST(EvalPipeline, BrokenProblemSuiteIsOneClearError) {
  test::TempDir dir;
  test::writeText(dir / "problems/level1/bad/problem.yaml", "name: bad\nlevel: 1\nsizes: {}\n");
  test::writeText(dir / "batch.jsonl", line("level1/bad", 0, kGood));
  EvalConfig c = configFor(dir);
  c.problemsDir = dir / "problems";
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "failed to load", "level1/bad/problem.yaml");
  EXPECT_FALSE(std::filesystem::exists(dir / "run/results.jsonl"));
}

}  // namespace
}  // namespace cuset
