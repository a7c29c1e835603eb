// `cuset refine`'s feedback text, and its performance rounds on the cuda backend with the fake CUDA
// driver (kernels run by the CPU simulator, timed with events): the faster of two correct kernels is
// kept, a faster wrong one never.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/refine/refine_feedback.hpp"
#include "cuset/refine/refine_loop.hpp"
#include "models/openai_test_server.hpp"
#include "test_util.hpp"

using nlohmann::json;

namespace cuset {
namespace {

TEST(RefineFeedback, CarriesWhatTheEvaluatorReported) {
  EvalResult r;
  r.verdict = Verdict::compile_error;
  r.reason = "kernel.cu(7): error: identifier \"blockidx\" is undefined";
  r.compileLog = "kernel.cu(7): error: identifier \"blockidx\" is undefined\nkernel.cu(9): warning: unused\nkernel.cu(12): error: expected a \";\"\n";
  const std::string full = failureFeedback(r, FeedbackDetail::full);
  EXPECT_NE(full.find("judged this kernel compile_error: kernel.cu(7)"), std::string::npos) << full;
  EXPECT_NE(full.find("Compiler errors:\n  kernel.cu(7): error"), std::string::npos) << full;
  EXPECT_NE(full.find("kernel.cu(12): error: expected a \";\""), std::string::npos) << full;
  EXPECT_EQ(full.find("warning"), std::string::npos) << "errors only";
  EXPECT_EQ(failureFeedback(r, FeedbackDetail::brief).find("Compiler errors"), std::string::npos);

  EvalResult wrong;
  wrong.verdict = Verdict::wrong_answer;
  wrong.reason = "trial 2 of 3: y: 10 of 100 elements differ";
  OutputComparison c;
  c.output = "z";
  c.elements = 8;
  c.mismatches = 8;
  c.firstMismatch = 0;
  c.firstMismatchIndex = {0};
  c.firstGot = 1.5;
  c.firstWant = 2.5;
  c.maxAbsError = 1.0;
  wrong.comparisons = {c};
  const std::string text = failureFeedback(wrong, FeedbackDetail::full);
  EXPECT_NE(text.find(wrong.reason), std::string::npos);
  EXPECT_NE(text.find("Output " + c.describe()), std::string::npos) << text;
  EXPECT_GT(failureProgress(wrong), failureProgress(r));
}

TEST(RefineFeedback, PerformanceFeedbackGivesTheMeasuredTimes) {
  EvalResult best;
  best.verdict = Verdict::correct;
  best.timingKind = "cuda_cupti";
  best.timingSamplesMs = {0.50, 0.52, 0.48};
  best.referenceTimingSamplesMs = {1.0, 1.0, 1.0};
  best.peakFraction = 0.25;
  const std::string text = performanceFeedback(best);
  for (const char* needle :
       {"median 0.5000 ms", "over 3 timings", "reference: median 1.0000 ms", "speedup 2.00x", "25.0% of the speed-of-light", "stay correct"}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  }
  best.referenceTimingSamplesMs.clear();
  EXPECT_NE(performanceFeedback(best).find("reference was not timed"), std::string::npos);
}

// relu kernels of three speeds, under their own names (the fake driver finds kernels by name).
std::string reluKernel(const std::string& name, int extraWork, bool correct) {
  return "/*@cuset\nlaunches:\n  - {kernel: " + name + ", grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}\n*/\n" +
         "extern \"C\" __global__ void " + name + "(const float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" +
         "  if (i >= n) return;\n  float v = x[i];\n  float acc = 0.0f;\n  for (int k = 0; k < " + std::to_string(extraWork) +
         "; ++k) acc = fmaf(acc, 0.5f, v);\n  y[i] = " + (correct ? "fmaxf(v, 0.0f) + 0.0f * acc" : "0.0f") + ";\n}\n";
}

TEST(RefineOnFakeGpu, KeepsTheFasterCorrectKernelAndNeverAFasterWrongOne) {
  test::TempDir dir;
  const std::string slow = reluKernel("relu_slow", 3000, true), fastWrong = reluKernel("relu_zero", 0, false),
                    fast = reluKernel("relu_fast", 0, true);
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "sim");
  const auto built = compiler.compile(slow + fastWrong + fast, {"relu_slow", "relu_zero", "relu_fast"});
  ASSERT_TRUE(built.ok) << built.log;
  ::setenv("CUSET_WORKER", CUSET_BINARY, 1);
  ::setenv("CUSET_LIBCUDA", CUSET_FAKE_LIBCUDA, 1);
  ::setenv("CUSET_FAKE_CUDA_KERNELS", built.library.c_str(), 1);
  // Round 1 (the plain prompt): the slow kernel. Round 2 (performance feedback): a faster kernel that
  // writes zeros. Round 3: the fast correct one.
  auto block = [](const std::string& s) { return "```cuda\n" + s + "```\n"; };
  const json rules = json::array({{{"contains", {"Measured on the GPU"}}, {"times", 1}, {"content", block(fastWrong)}},
                                  {{"contains", {"Measured on the GPU"}}, {"content", block(fast)}}});
  json script = json::object();
  script["models"]["m"] = {{"rules", rules}, {"default", {{"content", block(slow)}}}};
  test::OpenAiTestServer server(script);
  RefineOptions o;
  o.endpoint.endpoint.baseUrl = server.url();
  o.endpoint.parameters.model = "m";
  o.problemsDir = CUSET_PROBLEMS_DIR;
  o.outDir = dir / "run";
  o.only = {"level1/relu"};
  o.backend = "cuda";
  o.sizes = "small";
  o.candidatesPerRound = 1;
  o.rounds = 3;
  o.patience = 3;
  o.trials = 1;
  o.seed = 3;
  o.jobs = 1;
  o.showProgress = false;
  o.cuda.timer = "events";
  o.cuda.minSamples = 3;
  o.cuda.minSeconds = 0.05;
  o.cuda.maxSeconds = 0.5;
  o.cuda.trialTimeout = std::chrono::milliseconds(20000);
  const RefineSummary s = runRefine(o);
  const json report = json::parse(test::readText(dir / "run" / "refine.json"));
  const json& p = report["problems"][0];
  ASSERT_EQ(p["rounds"].size(), 3u) << p.dump(2);
  EXPECT_EQ(p["rounds"][0]["verdicts"], json({{"correct", 1}}));
  EXPECT_EQ(p["rounds"][1]["verdicts"], json({{"wrong_answer", 1}}));
  EXPECT_EQ(p["rounds"][2]["verdicts"], json({{"correct", 1}}));
  EXPECT_EQ(p["best"]["round"], 3) << p.dump(2);
  EXPECT_LT(p["rounds"][2]["best_median_ms"].get<double>(), p["rounds"][0]["best_median_ms"].get<double>());
  EXPECT_EQ(p["rounds"][1]["best_median_ms"], p["rounds"][0]["best_median_ms"]) << "the faster wrong kernel was not kept";
  const json best = json::parse(test::readText(dir / "run" / "best.jsonl"));
  EXPECT_NE(best["source"].get<std::string>().find("relu_fast"), std::string::npos);
  // Rounds 2 and 3 were asked with the measured time of the kernel kept so far.
  std::vector<json> transcript;
  std::istringstream in(test::readText(dir / "run" / "transcripts" / "level1_relu.jsonl"));
  for (std::string line; std::getline(in, line);) transcript.push_back(json::parse(line));
  ASSERT_EQ(transcript.size(), 3u);
  EXPECT_NE(transcript[1]["messages"].back()["content"].get<std::string>().find("This kernel is correct. Measured on the GPU: median"),
            std::string::npos);
  EXPECT_EQ(s.solved, 1u);
  for (const char* v : {"CUSET_LIBCUDA", "CUSET_FAKE_CUDA_KERNELS"}) ::unsetenv(v);
}

}  // namespace
}  // namespace cuset
