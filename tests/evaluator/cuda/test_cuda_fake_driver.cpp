// The cuda backend end to end on a machine without a GPU: `cuset __cuda-worker` loads the fake driver
// (tests/evaluator/cuda/fake_driver, kernels run by the CPU simulator) through $CUSET_LIBCUDA, so the
// supervisor-worker protocol, module loading, argument packing, region copies, the correctness
// checks on the returned region, sticky errors, hangs and the event-timed measurement all run here.
// What it cannot show is anything about a real GPU: those checks are benchmarks/device/check.sh.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

const std::string kManifest = "/*@cuset\nlaunches:\n  - {kernel: KERNEL, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]SHARED}\n*/\n";

// One relu-shaped kernel per behaviour, each under its own name (the fake finds kernels by name).
std::string kernel(const std::string& name, const std::string& body) {
  return "extern \"C\" __global__ void " + name + "(float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body +
         "\n}\n";
}

struct Case {
  std::string name, body;
  Verdict expected;
  std::string reasonNeedle;
  int sharedBytes = 0;
};

std::vector<Case> cases() {
  return {
      {"relu_good", "if (i < n) y[i] = fmaxf(x[i], 0.0f);", Verdict::correct, ""},
      {"relu_past_end", "if (i < n) { y[i] = fmaxf(x[i], 0.0f); if (i == n - 1) y[n] = 0.0f; }", Verdict::runtime_error,
       "past the end of output 'y'"},
      {"relu_mutates_input", "if (i < n) { y[i] = fmaxf(x[i], 0.0f); x[i] = 0.0f; }", Verdict::hack_suspected, "modified its input 'x'"},
      {"relu_divergent_barrier", "if (i % 2) {\n    __syncthreads();\n  } else {\n    __syncthreads();\n  }\n  if (i < n) y[i] = fmaxf(x[i], 0.0f);",
       Verdict::runtime_error, "CUDA_ERROR_LAUNCH_FAILED"},
      {"relu_hang", "while (i >= 0) { i = i * 1; }", Verdict::timeout, "worker was restarted"},
      {"relu_good_after", "if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;", Verdict::correct, ""},
      // 64 KiB of dynamic shared memory: launchable only after the worker's opt-in above 48 KiB.
      {"relu_big_shared",
       "extern __shared__ float stage[];\n  stage[threadIdx.x + 16000] = i < n ? x[i] : 0.0f;\n  __syncthreads();\n"
       "  if (i < n) y[i] = fmaxf(stage[threadIdx.x + 16000], 0.0f);",
       Verdict::correct, "", 64 * 1024},
  };
}

// Builds the kernels the fake driver runs (as the sim backend builds them), writes the candidates as
// a JSONL batch for level1/relu, and points the worker at the fake.
struct FakeGpuRun {
  test::TempDir dir;
  std::vector<Case> list;

  // `computeCapability`: the fake device's ("9.0" when empty).
  // `globals`: __device__ declarations the candidates share (put before every kernel's source).
  explicit FakeGpuRun(std::vector<Case> candidates, const std::string& computeCapability = "", const std::string& globals = "")
      : list(std::move(candidates)) {
    std::string all = globals, batch;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string source = kernel(list[i].name, list[i].body);
      all += source;
      names.push_back(list[i].name);
      std::string manifest = kManifest;
      manifest.replace(manifest.find("KERNEL"), 6, list[i].name);
      manifest.replace(manifest.find("SHARED"), 6, list[i].sharedBytes ? ", shared_bytes: " + std::to_string(list[i].sharedBytes) : "");
      batch += nlohmann::json{{"problem", "level1/relu"}, {"sample", i}, {"model", "fake"}, {"source", manifest + globals + source}}.dump() + "\n";
    }
    install(all, names, batch, computeCapability);
  }

  // Candidates given as a batch, whose kernels (extern "C", distinct names) are in `deviceCode`.
  FakeGpuRun(const std::string& deviceCode, const std::vector<std::string>& names, const std::string& batch) {
    install(deviceCode, names, batch, "");
  }

  void install(const std::string& all, const std::vector<std::string>& names, const std::string& batch, const std::string& computeCapability) {
    const SimCompiler compiler(SimToolchain::fromBuild(), dir / "sim");
    const auto built = compiler.compile(all, names);
    if (!built.ok) throw std::runtime_error(built.log);
    ::setenv("CUSET_WORKER", CUSET_BINARY, 1);
    ::setenv("CUSET_LIBCUDA", CUSET_FAKE_LIBCUDA, 1);
    ::setenv("CUSET_FAKE_CUDA_KERNELS", built.library.c_str(), 1);
    if (computeCapability.empty()) {
      ::unsetenv("CUSET_FAKE_CUDA_CC");
    } else {
      ::setenv("CUSET_FAKE_CUDA_CC", computeCapability.c_str(), 1);
    }
    test::writeText(dir / "batch.jsonl", batch);
  }

  // The run's timing options (a key part of the reference's kept timing, reference_timing_cache.hpp).
  CudaOptions cudaOptions(bool time = true) const {
    CudaOptions o;
    o.timer = "events";
    o.time = time;
    o.minSeconds = 0.05;
    o.maxSeconds = 0.3;
    o.trialTimeout = std::chrono::milliseconds(3000);
    o.kernelbenchTiming = kernelbenchTiming;
    o.retimeReference = retimeReference;
    return o;
  }

  EvalRunSummary evaluate(const std::string& runName = "run", bool time = true, std::vector<int> devices = {}, std::size_t jobs = 1) const {
    EvalConfig c;
    c.problemsDir = CUSET_PROBLEMS_DIR;
    c.candidatesPath = dir / "batch.jsonl";
    c.outDir = dir / runName;
    c.cacheDir = dir / "cache";
    c.backend = BackendKind::cuda;
    c.sizeSet = "small";  // the cuda backend's default is `full`
    c.jobs = jobs;
    c.devices = std::move(devices);
    c.trials = 2;
    c.seed = 3;
    c.showProgress = false;
    c.cuda = cudaOptions(time);
    return runEvaluation(c);
  }
  bool kernelbenchTiming = false;  // --kernelbench-timing
  bool retimeReference = false;    // --retime-reference

  // evaluate() with the fake driver's trace on (CUSET_FAKE_CUDA_TRACE); `timing` receives its lines from
  // the first L2 flush on: the timing runs, all in one worker process, so stream handles compare.
  EvalRunSummary evaluateTraced(std::vector<std::string>& timing) const {
    const std::filesystem::path trace = dir / "driver-trace.txt";
    ::setenv("CUSET_FAKE_CUDA_TRACE", trace.c_str(), 1);
    EvalRunSummary s = evaluate();
    ::unsetenv("CUSET_FAKE_CUDA_TRACE");
    std::istringstream lines(test::readText(trace));
    for (std::string line; std::getline(lines, line);) {
      if (!timing.empty() || line == kFlushLine) timing.push_back(line);
    }
    return s;
  }
  static inline const std::string kFlushLine = "memset bytes=" + std::to_string(2 << 20);  // twice the fake's 1 MiB L2

  nlohmann::json runRecord(const std::string& runName = "run") const { return nlohmann::json::parse(test::readText(dir / runName / "run.json")); }
};

TEST(CudaBackendOnFakeDriver, JudgesTimesAndSurvivesEveryKind) {
  const FakeGpuRun fake(cases());
  const auto& list = fake.list;
  const EvalRunSummary s = fake.evaluate();
  ASSERT_EQ(s.results.size(), list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const EvalResult& r = s.results[i];
    EXPECT_EQ(verdictName(r.verdict), verdictName(list[i].expected)) << list[i].name << ": " << r.reason << "\n" << r.compileLog;
    EXPECT_NE(r.reason.find(list[i].reasonNeedle), std::string::npos) << list[i].name << ": " << r.reason;
  }
  // Correct ones are timed with events; the fake has no LibTorch CUDA, so no speedup.
  for (const EvalResult* good : {&s.results[0], &s.results[5]}) {
    EXPECT_EQ(good->timingKind, "cuda_events") << good->origin;
    EXPECT_GE(good->timingSamplesMs.size(), 1u);
    EXPECT_GT(medianOf(good->timingSamplesMs), 0.0);
    EXPECT_TRUE(good->referenceTimingSamplesMs.empty());
    EXPECT_FALSE(speedupOf(*good).has_value());
    // Every GPU timing is scored against the problem's speed-of-light bound.
    ASSERT_TRUE(good->peakFraction.has_value()) << good->origin;
    EXPECT_GT(*good->peakFraction, 0.0);
  }
  // The run records the device it ran on.
  const auto run = fake.runRecord();
  EXPECT_EQ(run["cuda"]["device"]["name"], "CuSeT fake GPU (CPU simulator)") << run.dump(2);
  EXPECT_EQ(run["cuda"]["device"]["sm_count"], 4);
  EXPECT_EQ(run["cuda"]["device"]["driver_version"], 13000);
  EXPECT_GT(run["cuda"]["device"]["measured_bandwidth_gbs"].get<double>(), 0.0);
}

// What is timed is judged too (docs/exploits.md): outputs are poisoned before every timed sample and
// checked after the last and after a secret one, and one more timed sample runs on fresh inputs at
// the same addresses. The module keeps its globals across launches, as on a GPU, so a kernel can tell
// correctness trials (2 here, plus the determinism rerun) from timing by counting launches.
TEST(CudaBackendOnFakeDriver, TimedSamplesAreJudgedToo) {
  FakeGpuRun fake(
      {
          {"relu_timed_good", "if (i < n) y[i] = fmaxf(x[i], 0.0f);", Verdict::correct, ""},
          // Works for its first four launches (the trials and the timing run's first launch), idles after.
          {"relu_idles_when_timed",
           "__shared__ int skip;\n  if (threadIdx.x == 0) skip = cuset_fake_launches_a >= 4;\n  __syncthreads();\n  if (skip) return;\n"
           "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n  if (i == n - 1) atomicAdd(&cuset_fake_launches_a, 1);",
           Verdict::hack_suspected, "timed sample"},
          // From its fourth launch on, replays the results it saw for this input address.
          {"relu_caches_by_pointer",
           "if (i >= n || n > 64000) return;\n  if (cuset_fake_launches_b >= 4 && cuset_fake_seen == x) { y[i] = cuset_fake_cache[i]; return; }\n"
           "  y[i] = fmaxf(x[i], 0.0f);\n  cuset_fake_cache[i] = y[i];\n  if (i == n - 1) { cuset_fake_seen = x; atomicAdd(&cuset_fake_launches_b, "
           "1); }",
           Verdict::hack_suspected, "the timed sample on fresh inputs disagrees"},
      },
      "",
      "__device__ int cuset_fake_launches_a;\n__device__ int cuset_fake_launches_b;\n__device__ const float* cuset_fake_seen;\n"
      "__device__ float cuset_fake_cache[64000];\n");
  fake.kernelbenchTiming = true;
  const EvalRunSummary s = fake.evaluate();
  ASSERT_EQ(s.results.size(), fake.list.size());
  for (std::size_t i = 0; i < fake.list.size(); ++i) {
    const EvalResult& r = s.results[i];
    EXPECT_EQ(verdictName(r.verdict), verdictName(fake.list[i].expected)) << fake.list[i].name << ": " << r.reason;
    EXPECT_NE(r.reason.find(fake.list[i].reasonNeedle), std::string::npos) << fake.list[i].name << ": " << r.reason;
  }
  // --kernelbench-timing: KernelBench's cuda_event measurement of the same iterations beside CuSeT's
  // (with the events timer the two are the same samples; with CUPTI, CUPTI's busy times are CuSeT's).
  const EvalResult& good = s.results[0];
  ASSERT_FALSE(good.timingSamplesMs.empty());
  EXPECT_EQ(good.kernelbenchTimingSamplesMs, good.timingSamplesMs);
  const nlohmann::json line = toJson(good);
  EXPECT_EQ(line["timing"]["kernelbench"]["method"], "cuda_event");
  EXPECT_EQ(line["timing"]["kernelbench"]["candidate"]["trials"], good.timingSamplesMs.size());
  EXPECT_TRUE(line["timing"]["kernelbench"].contains("ratio_to_cuset"));
  EXPECT_TRUE(s.results[1].kernelbenchTimingSamplesMs.empty());  // not correct: not timed
}

// The timing loop as the driver sees it (the fake's trace, CUSET_FAKE_CUDA_TRACE): every timed sample
// starts with a write of twice the L2 and a reset of persisting lines, and every kernel it runs is on
// the stream its events are recorded on, so no launch of the candidate escapes the timed window.
TEST(CudaBackendOnFakeDriver, EverySampleStartsFromACleanL2OnTheTimedStream) {
  const FakeGpuRun fake({cases()[0]});
  std::vector<std::string> trace;
  const EvalRunSummary s = fake.evaluateTraced(trace);
  ASSERT_EQ(s.results.size(), 1u);
  const EvalResult& r = s.results[0];
  ASSERT_EQ(r.verdict, Verdict::correct) << r.reason;
  const std::size_t samples = r.timingSamplesMs.size();
  ASSERT_GE(samples, 1u);

  std::size_t flushes = 0, timedLaunches = 0, cleanStarts = 0;
  bool flushed = false, reset = false;
  std::set<std::string> streams;
  for (const std::string& line : trace) {
    if (line == FakeGpuRun::kFlushLine) {
      ++flushes;
      flushed = true;
      reset = false;
    } else if (line == "reset_persisting_l2") {
      reset = flushed;
    } else if (line.starts_with("event ")) {
      streams.insert(line.substr(line.find("stream=")));
    } else if (line.starts_with("launch relu_good ")) {
      ++timedLaunches;
      cleanStarts += flushed && reset;
      flushed = reset = false;
      streams.insert(line.substr(line.find("stream=")));
    }
  }
  EXPECT_EQ(flushes, samples);
  EXPECT_EQ(cleanStarts, samples);
  EXPECT_EQ(timedLaunches, samples + 1);  // and the sample on fresh inputs
  EXPECT_EQ(streams.size(), 1u) << "launches and events on different streams";
}

// The reference's timing is kept per (problem, GPU, driver, LibTorch, timing rule) and reused by later
// candidates and runs (reference_timing_cache.hpp). The fake has no LibTorch CUDA to time a reference,
// so the test keeps one itself: 1000 ms against a kernel of a few milliseconds is a speedup far above
// 10x, which KernelBench calls excessive, and so does CuSeT's finding.
TEST(CudaBackendOnFakeDriver, AKeptReferenceTimingGivesTheSpeedupAndAbove10xIsAFinding) {
  FakeGpuRun fake({cases()[0]});
  fake.kernelbenchTiming = true;
  const EvalRunSummary first = fake.evaluate("first");
  ASSERT_EQ(first.results.at(0).verdict, Verdict::correct) << first.results[0].reason;
  EXPECT_FALSE(speedupOf(first.results[0]));  // nothing could time the reference
  EXPECT_TRUE(first.results[0].flags.empty());

  const nlohmann::json device = fake.runRecord("first")["cuda"]["device"];
  ReferenceTimingCache cache(fake.dir / "cache" / "reference-timing");
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const ReferenceTimingKey key = referenceTimingKey(cache, *suite.find("level1/relu"), "small", fake.cudaOptions(), device);
  cache.store(
      key,
      {{"kind", "cuda_events"}, {"samples_ms", {1000.0, 1000.0}}, {"event_samples_ms", {1000.0, 1000.0}}, {"problems", nlohmann::json::array()}});

  const EvalRunSummary second = fake.evaluate("second");
  const EvalResult& r = second.results.at(0);
  ASSERT_EQ(r.verdict, Verdict::correct) << r.reason;
  ASSERT_TRUE(speedupOf(r));
  EXPECT_GT(*speedupOf(r), 10.0);
  EXPECT_EQ(r.flags, std::vector<std::string>{"speedup_above_10x"});
  EXPECT_FALSE(r.referenceTimingKeptFrom.empty());
  const nlohmann::json line = toJson(r);
  EXPECT_EQ(line["timing"]["reference_median_ms"], 1000.0);
  EXPECT_TRUE(line["timing"].contains("reference_measured_at"));
  EXPECT_GT(line["timing"]["kernelbench"]["speedup"].get<double>(), 10.0);  // KernelBench's mean over mean, from the same kept samples
  EXPECT_NE(test::readText(fake.dir / "second" / "results.jsonl").find("\"speedup_above_10x\""), std::string::npos);

  // --retime-reference: measured again (here: cannot be), never the kept one.
  fake.retimeReference = true;
  const EvalRunSummary third = fake.evaluate("third");
  EXPECT_FALSE(speedupOf(third.results.at(0)));
  EXPECT_TRUE(third.results[0].referenceTimingKeptFrom.empty());
}

TEST(CudaBackendOnFakeDriver, AGpuNewerThanNvrtcGetsPtx) {
  // The fake refuses cubins for compute capability 99.0, as a driver refuses machine code for
  // another architecture: only PTX, JIT-compiled by the driver, can run.
  const FakeGpuRun fake({cases()[0]}, "99.0");
  const EvalRunSummary s = fake.evaluate();
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].verdict, Verdict::correct) << s.results[0].reason;
  EXPECT_EQ(fake.runRecord()["cuda"]["device"]["compute_capability"], "99.0");
}

TEST(CudaBackendOnFakeDriver, AWorkerKeepsOnlyRecentModulesLoaded) {
  // Six candidates, six images, on a device that holds three modules at most.
  std::vector<Case> six;
  for (int i = 0; i < 6; ++i) six.push_back({"relu_v" + std::to_string(i), "if (i < n) y[i] = fmaxf(x[i], 0.0f);", Verdict::correct, ""});
  const FakeGpuRun fake(six);
  ::setenv("CUSET_FAKE_CUDA_MAX_MODULES", "3", 1);
  ::setenv("CUSET_CUDA_MODULE_CACHE", "100", 1);  // keeping every module: the fourth does not load
  const EvalRunSummary keepAll = fake.evaluate("keep-all", false);
  ASSERT_EQ(keepAll.results.size(), 6u);
  EXPECT_EQ(keepAll.results[2].verdict, Verdict::correct) << keepAll.results[2].reason;
  EXPECT_EQ(keepAll.results[3].verdict, Verdict::runtime_error);
  EXPECT_NE(keepAll.results[3].reason.find("loading the module: cuModuleLoadDataEx: CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos)
      << keepAll.results[3].reason;
  ::setenv("CUSET_CUDA_MODULE_CACHE", "2", 1);  // the default is 64
  const EvalRunSummary bounded = fake.evaluate("bounded", false);
  for (const EvalResult& r : bounded.results) EXPECT_EQ(r.verdict, Verdict::correct) << r.origin << ": " << r.reason;
  ::unsetenv("CUSET_FAKE_CUDA_MAX_MODULES");
  ::unsetenv("CUSET_CUDA_MODULE_CACHE");
}

// Two GPUs (`--devices all`): one worker each, every candidate judged and timed on one of them, both
// used, verdicts as on one device; `--devices 1` uses only the second.
TEST(CudaBackendOnFakeDriver, SeveralDevicesEachJudgeCandidates) {
  ::setenv("CUSET_FAKE_CUDA_DEVICES", "2", 1);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  std::vector<Case> list;
  for (int i = 0; i < 8; ++i) list.push_back({"relu_copy" + std::to_string(i), "if (i < n) y[i] = fmaxf(x[i], 0.0f);", Verdict::correct, ""});
  list.push_back({"relu_zero_out", "if (i < n) y[i] = 0.0f;", Verdict::wrong_answer, ""});
  const FakeGpuRun fake(list);
  const EvalRunSummary both = fake.evaluate("two", true, {}, 2);
  std::set<int> used;
  for (std::size_t i = 0; i < both.results.size(); ++i) {
    const EvalResult& r = both.results[i];
    EXPECT_EQ(verdictName(r.verdict), verdictName(list[i].expected)) << list[i].name << ": " << r.reason;
    ASSERT_TRUE(r.device.has_value()) << list[i].name;
    used.insert(*r.device);
    if (r.verdict == Verdict::correct) {
      EXPECT_FALSE(r.timingSamplesMs.empty());
    }
  }
  EXPECT_EQ(used, (std::set<int>{0, 1})) << "both devices judged candidates";
  const auto run = nlohmann::json::parse(test::readText(fake.dir / "two" / "run.json"));
  ASSERT_EQ(run["cuda"]["devices"].size(), 2u) << run["cuda"].dump(2);
  EXPECT_EQ(run["cuda"]["devices"][1]["device"]["name"], "CuSeT fake GPU 1 (CPU simulator)");
  EXPECT_EQ(run["cuda"]["device_of"].size(), list.size());
  const EvalRunSummary second = fake.evaluate("second", true, {1}, 2);
  for (const auto& r : second.results) EXPECT_EQ(r.device, 1) << r.problem;
  ::unsetenv("CUSET_FAKE_CUDA_DEVICES");
}

}  // namespace
}  // namespace cuset

namespace cuset {
namespace {

// KernelBench solutions on the cuda backend: the translated plan's kernels run through the worker's
// launches, its library steps (a torch op beside the kernel) in the worker too, on a host copy since
// this LibTorch has no CUDA (so the candidate is judged but not timed).
TEST(CudaBackendOnFakeDriver, KernelBenchSolutionsRunTheirPlans) {
  if (!runSubprocess({pythonWithTorch(), "-c", "import torch"}, std::chrono::seconds(60)).ok()) GTEST_SKIP() << "no Python with torch";
  auto solution = [](const std::string& kernel, const std::string& forward) {
    return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\nsrc = '''\n#include <torch/extension.h>\n"
           "extern \"C\" __global__ void " +
           kernel +
           "(const float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\ntorch::Tensor run(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n"
           "  " +
           kernel +
           "<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());\n  return y;\n}\n'''\n"
           "m = load_inline(name='" +
           kernel +
           "', cpp_sources='torch::Tensor run(torch::Tensor x);', cuda_sources=src, functions=['run'])\n"
           "class ModelNew(nn.Module):\n    def forward(self, x):\n" +
           forward + "\n";
  };
  // The third launches on a stream of its own, which KernelBench's events (on the current stream) do
  // not see: the plan runs every launch on the worker's one stream, so it is timed with the rest.
  const std::vector<std::pair<std::string, std::string>> solutions = {
      {"kb_relu_pure", solution("kb_relu_pure", "        return m.run(x)")},
      {"kb_relu_library", solution("kb_relu_library", "        return m.run(x * 1.0) + 0.0")},
      {"kb_relu_side_stream", solution("kb_relu_side_stream",
                                       "        side = torch.cuda.Stream()\n        with torch.cuda.stream(side):\n            y = m.run(x)\n"
                                       "        torch.cuda.current_stream().wait_stream(side)\n        return y")}};
  test::TempDir translations;
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const Problem& relu = *suite.find("level1/relu");
  const KernelBenchTranslator translator(TranslatorOptions{.cacheDir = translations / "cache"});
  std::string device, batch;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < solutions.size(); ++i) {
    const Translation t = translator.translate(relu, solutions[i].second);
    ASSERT_TRUE(t.ok()) << t.reason << "\n" << t.log;
    device += t.plan.deviceSource;
    names.push_back(solutions[i].first);
    batch += nlohmann::json{{"problem", "level1/relu"}, {"sample", i}, {"model", "kb"}, {"source", solutions[i].second}}.dump() + "\n";
  }
  const FakeGpuRun fake(device, names, batch);
  std::vector<std::string> trace;
  const EvalRunSummary s = fake.evaluateTraced(trace);
  ASSERT_EQ(s.results.size(), 3u);
  const EvalResult& pure = s.results[0];
  const EvalResult& library = s.results[1];
  EXPECT_EQ(pure.verdict, Verdict::correct) << pure.reason;
  EXPECT_EQ(pure.form, "kernelbench");
  EXPECT_TRUE(pure.libraryOps.empty());
  EXPECT_EQ(pure.timingKind, "cuda_events");  // timed like any kernel
  EXPECT_EQ(library.verdict, Verdict::correct) << library.reason;
  EXPECT_FALSE(library.libraryOps.empty());
  EXPECT_TRUE(library.timingKind.empty());  // library steps ran on the host: judged, not timed
  EXPECT_NE(std::find(library.flags.begin(), library.flags.end(), "not_timed_library_steps_on_host"), library.flags.end());
  const EvalResult& side = s.results[2];
  EXPECT_EQ(side.verdict, Verdict::correct) << side.reason;
  EXPECT_EQ(side.timingKind, "cuda_events");
  std::set<std::string> streams;
  std::size_t sideLaunches = 0;
  for (const std::string& line : trace) {
    if (line.starts_with("event ") || line.starts_with("launch kb_relu_")) streams.insert(line.substr(line.find("stream=")));
    sideLaunches += line.starts_with("launch kb_relu_side_stream ");
  }
  EXPECT_GT(sideLaunches, side.timingSamplesMs.size());
  EXPECT_EQ(streams.size(), 1u) << "a launch ran outside the timed stream";
}

// A Triton solution on the cuda backend: recorded for the device's own architecture (the fake's 9.0:
// Triton's sm_90a code), compiled by the run's architecture-specific NVRTC target, launched with that
// compile's geometry and timed like any kernel. (The fake runs the kernel of the same name from the
// simulator's recording: what a GPU computes is benchmarks/device/check.sh's to show.)
TEST(CudaBackendOnFakeDriver, ATritonSolutionRunsItsCodeForTheDevicesArchitecture) {
  if (!runSubprocess({pythonWithTorch(), "-c", "import triton"}, std::chrono::seconds(60)).ok()) GTEST_SKIP() << "no Python with Triton";
  const std::string solution =
      "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
      "def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    inside = offsets < n\n    x = tl.load(x_ptr + offsets, mask=inside)\n    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=inside)\n\n\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        y = torch.empty_like(x)\n"
      "        relu_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)\n        return y\n";
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const Problem& relu = *suite.find("level1/relu");
  const Translation simulated = KernelBenchTranslator(TranslatorOptions{}).translate(relu, solution);
  const Translation gpu = KernelBenchTranslator(TranslatorOptions{.tritonCapability = 90}).translate(relu, solution);
  ASSERT_TRUE(simulated.ok()) << simulated.reason << "\n" << simulated.log;
  ASSERT_TRUE(gpu.ok()) << gpu.reason << "\n" << gpu.log;
  ASSERT_EQ(gpu.plan.kernelNames, simulated.plan.kernelNames);
  EXPECT_EQ(gpu.plan.deviceArch, "sm_90a");
  const FakeGpuRun fake(simulated.plan.deviceSource, simulated.plan.kernelNames,
                        nlohmann::json{{"problem", "level1/relu"}, {"sample", 0}, {"model", "triton"}, {"source", solution}}.dump() + "\n");
  const EvalRunSummary s = fake.evaluate();
  ASSERT_EQ(s.results.size(), 1u);
  const EvalResult& r = s.results[0];
  EXPECT_EQ(r.verdict, Verdict::correct) << r.reason << "\n" << r.compileLog;
  EXPECT_EQ(r.form, "triton");
  EXPECT_EQ(r.timingKind, "cuda_events");
  EXPECT_EQ(fake.runRecord()["cuda"]["device"]["compute_capability"], "9.0");
}

// triton.autotune on the cuda backend: before the trials the worker times each configuration as Triton's
// autotuner does and keeps the fastest, whose code the trials and the timing then run. (The fake runs a
// kernel by its name from a simulator library: here one solution launching both configurations.)
TEST(CudaBackendOnFakeDriver, AnAutotunedTritonKernelIsTunedOnTheGpuBeforeItsTrials) {
  if (!runSubprocess({pythonWithTorch(), "-c", "import triton"}, std::chrono::seconds(60)).ok()) GTEST_SKIP() << "no Python with Triton";
  const std::string kernel =
      "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n{}@triton.jit\n"
      "def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    inside = offsets < n\n    x = tl.load(x_ptr + offsets, mask=inside)\n    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=inside)\n\n\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        y = torch.empty_like(x)\n        n = x.numel()\n{}        return y\n";
  const std::string autotuned =
      fmt::format(fmt::runtime(kernel),
                  "@triton.autotune(configs=[triton.Config({'BLOCK': 256}, num_warps=2), triton.Config({'BLOCK': 1024}, num_warps=4)], key=['n'])\n",
                  "        relu_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK']),)](x, y, n)\n");
  const std::string both = fmt::format(fmt::runtime(kernel), "",
                                       "        relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, num_warps=2)\n"
                                       "        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, num_warps=4)\n");
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const Problem& relu = *suite.find("level1/relu");
  const Translation simulated = KernelBenchTranslator(TranslatorOptions{}).translate(relu, both);
  const Translation gpu = KernelBenchTranslator(TranslatorOptions{.tritonCapability = 90}).translate(relu, autotuned);
  ASSERT_TRUE(simulated.ok()) << simulated.reason << "\n" << simulated.log;
  ASSERT_TRUE(gpu.ok()) << gpu.reason << "\n" << gpu.log;
  ASSERT_EQ(gpu.plan.kernelNames, simulated.plan.kernelNames);  // the configurations' kernels, under the names the fake runs
  const FakeGpuRun fake(simulated.plan.deviceSource, simulated.plan.kernelNames,
                        nlohmann::json{{"problem", "level1/relu"}, {"sample", 0}, {"model", "triton"}, {"source", autotuned}}.dump() + "\n");
  const EvalRunSummary s = fake.evaluate();
  ASSERT_EQ(s.results.size(), 1u);
  const EvalResult& r = s.results[0];
  EXPECT_EQ(r.verdict, Verdict::correct) << r.reason << "\n" << r.compileLog;
  EXPECT_EQ(r.timingKind, "cuda_events");
  const std::size_t log = r.compileLog.find("--- autotuning on the GPU");
  ASSERT_NE(log, std::string::npos) << r.compileLog;
  const std::string tuning = r.compileLog.substr(log);
  EXPECT_NE(tuning.find("relu_kernel("), std::string::npos) << tuning;
  EXPECT_NE(tuning.find("BLOCK: 256, num_warps: 2"), std::string::npos) << tuning;
  EXPECT_NE(tuning.find("BLOCK: 1024, num_warps: 4"), std::string::npos) << tuning;
  EXPECT_EQ(std::count(tuning.begin(), tuning.end(), '\n'), 3) << tuning;  // the heading and one line per configuration
  EXPECT_EQ(tuning.find("refused"), std::string::npos) << tuning;
  const std::size_t chosen = tuning.find("\nchosen ");
  ASSERT_NE(chosen, std::string::npos) << tuning;
  EXPECT_EQ(tuning.find("\nchosen ", chosen + 1), std::string::npos) << tuning;  // one choice for the one key
  EXPECT_NE(tuning.find(" ms ("), std::string::npos) << tuning;
}

}  // namespace
}  // namespace cuset
