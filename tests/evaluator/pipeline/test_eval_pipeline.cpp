#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

const std::string kManifest = "/*@cuset\nlaunches:\n  - {kernel: relu_kernel, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}\n*/\n";
const std::string kGood = kManifest +
                          "extern \"C\" __global__ void relu_kernel(const float* x, float* y, int n) {\n"
                          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";

std::string line(const std::string& problem, int sample, const std::string& source) {
  return nlohmann::json{{"problem", problem}, {"sample", sample}, {"model", "m"}, {"source", source}}.dump() + "\n";
}

std::string mixedBatch() {
  return line("level1/relu", 0, kGood) + line("level1/relu", 1, kManifest + "extern \"C\" __global__ void relu_kernel(float* x) { x[0] = nope; }") +
         line("level1/relu", 2, kManifest + "extern \"C\" __global__ void other(const float* x, float* y, int n) {}") +
         line("level1/relu", 3, "extern \"C\" __global__ void relu_kernel() {}") + line("level9/unknown", 0, kGood) + "this line is not json\n" +
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

// An engine keeps its harness between runs unless the run changes what the harness is built from; the
// GPU's timing options (a request's num_perf_trials) change nothing of a harness without a GPU.
TEST(EvalPipeline, AnEngineKeepsItsHarnessUnlessTheRunChangesIt) {
  test::TempDir dir;
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood));
  EvaluationEngine engine;
  EvalConfig c = configFor(dir);
  const auto runIn = [&](const std::string& name) {
    c.outDir = dir / name;
    const EvalRunSummary s = engine.run(c);
    EXPECT_EQ(s.results.at(0).verdict, Verdict::compiled) << name << ": " << s.results.at(0).reason;
    return s.warmHarness;
  };
  EXPECT_FALSE(runIn("first"));
  EXPECT_TRUE(runIn("same"));
  c.cuda.minSamples += 7;
  c.seed = 99;
  EXPECT_TRUE(runIn("other-timing-options"));
  c.jobs = 1;
  EXPECT_FALSE(runIn("other-jobs"));
  EXPECT_TRUE(runIn("again"));
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

TEST(EvalPipeline, ARunFolderServesOneEvaluationAtATime) {
  test::TempDir dir;
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood));
  std::filesystem::create_directories(dir / "run");
  std::string holder;
  const auto other = FileLock::tryLock(dir / "run" / "run.lock", "cuset eval, pid 4242 on elsewhere", holder);
  ASSERT_TRUE(other);
  EvalConfig c = configFor(dir);
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "is in use by another evaluation (cuset eval, pid 4242 on elsewhere)");
  EXPECT_FALSE(std::filesystem::exists(dir / "run" / "results.jsonl"));
}

TEST(EvalPipeline, AResumeThatWouldMixTwoEvaluationsIsRefused) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "problems" / "level1");
  std::filesystem::copy(std::filesystem::path(CUSET_PROBLEMS_DIR) / "level1" / "relu", dir / "problems" / "level1" / "relu",
                        std::filesystem::copy_options::recursive);
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood));
  EvalConfig c = configFor(dir);
  c.problemsDir = dir / "problems";
  c.trials = 2;
  runEvaluation(c);
  c.resume = true;
  c.trials = 3;
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "--resume would mix two evaluations", "trials 2 -> 3");
  c.trials = 2;
  c.backend = BackendKind::sim;
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "backend \"compile-only\" -> \"sim\"");
  c.backend = BackendKind::compileOnly;
  // The same candidate key with other code.
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood + "// edited\n"));
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "level1/relu sample 0 of model 'm'", "was judged with another source");
  // An edited problem.
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood));
  const std::string yaml = test::readText(dir / "problems/level1/relu/problem.yaml");
  test::writeText(dir / "problems/level1/relu/problem.yaml", yaml + "\n# edited\n");
  CUSET_EXPECT_THROW_WITH(runEvaluation(c), "problems_hash");
  test::writeText(dir / "problems/level1/relu/problem.yaml", yaml);
  // New candidates may join a run: that is how a batch grows.
  test::writeText(dir / "batch.jsonl", line("level1/relu", 0, kGood) + line("level1/relu", 1, kGood));
  EXPECT_EQ(runEvaluation(c).evaluatedNow, 1u);
}

// A compiler echoes the offending line: a 350 KB line makes a bounded log, quoted in excerpts (before:
// the whole line, in the results file and every report).
TEST(EvalPipeline, ReasonsAndLogsQuoteACandidateInExcerpts) {
  test::TempDir dir;
  std::string longLine = "  y[0] = nope";
  for (int i = 0; i < 50000; ++i) longLine += " + x[0]";
  test::writeText(
      dir / "batch.jsonl",
      line("level1/relu", 0, kManifest + "extern \"C\" __global__ void relu_kernel(const float* x, float* y, int n) {\n" + longLine + ";\n}\n"));
  const EvalRunSummary s = runEvaluation(configFor(dir));
  ASSERT_EQ(s.results.size(), 1u);
  const EvalResult& r = s.results[0];
  EXPECT_EQ(r.verdict, Verdict::compile_error);
  EXPECT_NE(r.reason.find("\"nope\""), std::string::npos) << r.reason;
  EXPECT_LE(r.reason.size(), 4096u);
  EXPECT_LT(r.compileLog.size(), 4096u);
  EXPECT_NE(r.compileLog.find("identifier \"nope\" is undefined"), std::string::npos) << r.compileLog;
  EXPECT_NE(r.compileLog.find("bytes left out"), std::string::npos) << r.compileLog;
  EXPECT_LT(test::readText(dir / "run/results.jsonl").size(), 64u * 1024 + longLine.size() + 4096) << "the source itself is stored once, whole";
}

// Text that is not UTF-8 (a Latin-1 comment) is stored with U+FFFD in its place; the candidate is
// judged and the run's files stay valid JSON.
TEST(EvalPipeline, TextThatIsNotUtf8IsJudgedAndStoredReplaced) {
  test::TempDir dir;
  const std::string latin1 = kGood + "// caf\xe9 au lait\n";
  std::string jsonl = line("level1/relu", 0, kGood + "// cafe au lait\n");
  jsonl.replace(jsonl.find("cafe"), 4, "caf\xe9");  // a raw Latin-1 byte inside the JSON string
  test::writeText(dir / "batch.jsonl", jsonl);
  test::writeText(dir / "cands" / "level1" / "relu" / "latin1.cu", latin1);
  for (const auto& candidates : {dir / "batch.jsonl", dir / "cands"}) {
    EvalConfig c = configFor(dir);
    c.candidatesPath = candidates;
    c.outDir = dir / ("run-" + candidates.filename().string());
    const EvalRunSummary s = runEvaluation(c);
    ASSERT_EQ(s.results.size(), 1u) << candidates;
    EXPECT_EQ(s.results[0].verdict, Verdict::compiled) << s.results[0].reason;
    const std::string stored = test::readText(c.outDir / "results.jsonl");
    const nlohmann::json record = nlohmann::json::parse(stored.substr(0, stored.find('\n')));
    EXPECT_NE(record["source"].get<std::string>().find("caf\xef\xbf\xbd"), std::string::npos);
  }
}

// A reference that raises, returns the wrong shape or never returns makes its problem's candidates
// `unsupported` with the reason; every other candidate is judged and the run finishes (before: the run
// stopped with a trace and left run.json "running", or hung).
TEST(EvalPipeline, BrokenReferencesAreFoundFirstAndIsolated) {
  ::setenv("CUSET_WORKER", CUSET_BINARY, 1);
  test::TempDir dir;
  const std::filesystem::path relu = std::filesystem::path(CUSET_PROBLEMS_DIR) / "level1" / "relu";
  std::filesystem::create_directories(dir / "problems" / "level1");
  std::filesystem::copy(relu, dir / "problems" / "level1" / "relu", std::filesystem::copy_options::recursive);
  const std::string yaml = test::readText(relu / "problem.yaml");
  const std::string body = yaml.substr(0, yaml.find("reference: |"));
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"raises", "  def forward(x: Tensor) -> Tensor:\n      return x.view(7, -1)\n"},
      {"wrong_shape", "  def forward(x: Tensor) -> Tensor:\n      return x.sum(0)\n"},
      {"hangs", "  def forward(x: Tensor) -> Tensor:\n      i = 0\n      while i >= 0:\n          i = i + 1\n      return x\n"}};
  std::string batch = line("level1/relu", 0, kGood);
  for (const auto& [name, reference] : broken) {
    std::string text = body + "reference: |\n" + reference;
    text.replace(text.find("name: relu"), 10, "name: " + name);
    test::writeText(dir / "problems" / "level1" / name / "problem.yaml", text);
    batch += line("level1/" + name, 0, kGood);
  }
  test::writeText(dir / "batch.jsonl", batch);
  EvalConfig c = configFor(dir);
  c.problemsDir = dir / "problems";
  c.backend = BackendKind::sim;
  c.trials = 1;
  c.referenceTimeout = std::chrono::milliseconds(5000);
  const EvalRunSummary s = runEvaluation(c);
  ASSERT_EQ(s.results.size(), 4u);
  EXPECT_EQ(s.results[0].verdict, Verdict::correct) << s.results[0].reason;
  const std::vector<std::string> why = {"shape '[7, -1]' is invalid", "has shape [1000] but outputs declares [64, 1000]",
                                        "did not finish within 5 s"};
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(s.results[i].verdict, Verdict::unsupported) << s.results[i].problem << ": " << s.results[i].reason;
    EXPECT_NE(s.results[i].reason.find(why[i - 1]), std::string::npos) << s.results[i].reason;
  }
  const nlohmann::json run = readJsonFile(dir / "run/run.json");
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["unjudgeable_problems"].size(), 3u);
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
