// The sim backend end to end: real candidates through runEvaluation, in sandboxed workers. Every
// adversarial kernel gets its verdict and the run survives all of them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

const std::string kReluManifest = "/*@cuset\nlaunches:\n  - {kernel: relu, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}\n*/\n";

std::string relu(const std::string& body) {
  return kReluManifest + "extern \"C\" __global__ void relu(float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body +
         "\n}\n";
}

const std::string kRowSumManifest = "/*@cuset\nlaunches:\n  - {kernel: row_sum, grid: [M], block: [256], args: [x, y, M, N]}\n*/\n";

std::string rowSum(const std::string& barrier) {
  return kRowSumManifest + R"(extern "C" __global__ void row_sum(const float* x, float* y, int M, int N) {
  __shared__ float partial[256];
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += x[(size_t)blockIdx.x * N + i];
  partial[threadIdx.x] = s;
  )" + barrier +
         R"(
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int i = 0; i < blockDim.x; ++i) t += partial[i];
    y[blockIdx.x] = t;
  }
})";
}

// relu under another kernel name, declared extern "C" as many published kernels are.
std::string reluNamed(const std::string& name) {
  return fmt::format(
      "/*@cuset\nlaunches:\n  - {{kernel: {0}, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}}\n*/\n"
      "extern \"C\" __global__ void {0}(float* x, float* y, int n) {{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}}\n",
      name);
}

struct Case {
  std::string name;
  std::string problem;
  std::string source;
  Verdict expected;
  std::string reasonNeedle;
};

std::vector<Case> adversarialCases() {
  return {
      {"correct", "level1/relu", relu("if (i < n) y[i] = fmaxf(x[i], 0.0f);"), Verdict::correct, ""},
      {"no_op", "level1/relu", relu(""), Verdict::wrong_answer, "nan, want"},
      {"partial_write", "level1/relu", relu("if (i < n / 2) y[i] = fmaxf(x[i], 0.0f);"), Verdict::wrong_answer, "differ"},
      {"out_of_bounds", "level1/relu", relu("if (i < n) { y[i] = fmaxf(x[i], 0.0f); if (i == n - 1) y[n] = 0.0f; }"), Verdict::runtime_error,
       "trial 1 of 3: out-of-bounds write past the end of output 'y' by 1 byte(s) (a 256000-byte buffer)"},
      // Far past the region: into memory the kernel was never given (the shared file's spare room).
      {"far_out_of_bounds", "level1/relu", relu("if (i < n) y[i] = fmaxf(x[i], 0.0f);\n  if (i == 0) y[n + 300000] = 1.0f;"), Verdict::runtime_error,
       "SIGSEGV"},
      {"input_mutation", "level1/relu", relu("if (i < n) { y[i] = fmaxf(x[i], 0.0f); x[i] = 0.0f; }"), Verdict::hack_suspected,
       "modified its input 'x'"},
      {"infinite_loop", "level1/relu", relu("while (i >= 0) { i = i * 1; }"), Verdict::timeout, "time limit"},
      {"wild_pointer", "level1/relu", relu("if (i == 0) *(volatile int*)(16) = 1;"), Verdict::runtime_error, "SIGSEGV"},
      {"divergent_barrier", "level1/relu",
       relu("if (i % 2) {\n    __syncthreads();\n  } else {\n    __syncthreads();\n  }\n  if (i < n) y[i] = fmaxf(x[i], 0.0f);"),
       Verdict::runtime_error, "divergent __syncthreads"},
      // The race is named (thread 0 reads every slot while the others still write theirs), not only its wrong sums.
      {"missing_barrier", "level1/row_sum", rowSum(""), Verdict::runtime_error,
       "a race in shared memory: this thread writes bytes thread (0,0,0) read (byte 4 of the block's static __shared__ memory"},
      {"row_sum_correct", "level1/row_sum", rowSum("__syncthreads();"), Verdict::correct, ""},
      {"bad_manifest", "level1/relu", "/*@cuset\nlaunches: [{kernel: relu}]\n*/\n__global__ void relu() {}", Verdict::invalid_submission,
       "required but missing"},
      {"oversize_block", "level1/relu",
       "/*@cuset\nlaunches:\n  - {kernel: relu, grid: [1], block: [2048], args: [x, y, M*N]}\n*/\n"
       "extern \"C\" __global__ void relu(float* x, float* y, int n) {}",
       Verdict::invalid_submission, "block.x = 2048"},
      {"parameter_mismatch", "level1/relu", kReluManifest + "extern \"C\" __global__ void relu(float* x, float* y, long long n) { }",
       Verdict::invalid_submission, "8-byte integer but the manifest passes a 32-bit int"},
      {"host_include", "level1/relu", "#include <stdlib.h>\n" + relu(""), Verdict::invalid_submission, "<stdlib.h> is not available"},
      // One element past the end of the input, as compute-sanitizer's memcheck would report it.
      {"read_one_past_the_end", "level1/relu", relu("if (i < n) y[i] = fmaxf(x[i], 0.0f) + 0.0f * x[i + 1];"), Verdict::runtime_error,
       "out-of-bounds read past the end of input 'x' by 1 byte(s)"},
      // Reading past an output and before an input's start: fenced too (the latter from trial 3, whose
      // buffers start right after an inaccessible page).
      {"read_past_the_output", "level1/relu", relu("if (i < n) y[i] = fmaxf(x[i], 0.0f);\n  if (i == 0) y[0] += 0.0f * y[n];"),
       Verdict::runtime_error, "trial 1 of 3: out-of-bounds read past the end of output 'y' by 1 byte(s) (a 256000-byte buffer)"},
      {"read_before_the_start", "level1/relu", relu("if (i < n) y[i] = fmaxf(x[i], 0.0f) + 0.0f * x[i - 1];"), Verdict::runtime_error,
       "trial 3 of 3: out-of-bounds read before the start of input 'x' by 4 byte(s) (a 256000-byte buffer)"},
      // float4 loads over the whole input (its size is a multiple of 16 bytes) stay legal.
      {"vector_loads", "level1/relu",
       relu("if (4 * i < n) {\n    float4 v = reinterpret_cast<const float4*>(x)[i];\n"
            "    reinterpret_cast<float4*>(y)[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));\n  }"),
       Verdict::correct, ""},
      // Inline PTX the simulator runs, and PTX it does not: not judged here, and not the model's fault.
      {"inline_ptx", "level1/relu",
       relu("unsigned lane;\n  float v = 0.0f;\n  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
            "  if (i < n) asm(\"ld.global.nc.f32 %0, [%1];\" : \"=f\"(v) : \"l\"(x + i));\n  if (i < n) y[i] = fmaxf(v, 0.0f) + 0.0f * lane;"),
       Verdict::correct, ""},
      // Names the worker's process also exports (LibTorch's BLAS and LAPACK, the C library): the kernel
      // is called, never the process's routine (before -Bsymbolic: SIGSEGV in LibTorch's saxpy).
      {"named_like_blas_level1", "level1/relu", reluNamed("saxpy"), Verdict::correct, ""},
      {"named_like_blas_level3", "level1/relu", reluNamed("sgemm"), Verdict::correct, ""},
      {"named_like_lapack", "level1/relu", reluNamed("sgetrf_"), Verdict::correct, ""},
      {"named_like_libc", "level1/relu", reluNamed("sync"), Verdict::correct, ""},
      {"unsimulated_ptx", "level1/relu",
       relu("unsigned r;\n  asm(\"bfind.u32 %0, %1;\" : \"=r\"(r) : \"r\"(i));\n  if (i < n) y[i] = fmaxf(x[i], 0.0f) + 0.0f * r;"),
       Verdict::unsupported,
       "the CPU simulator cannot run this kernel (judge it with --backend cuda): line 8: inline PTX `bfind.u32 %0, %1` is not simulated"},
  };
}

// One launch of `k(int* y)` with y of 4 ints, for driving the sandbox without a real problem.
struct OneKernelJob {
  Problem problem = parseProblem(
      "name: t\nlevel: 1\nsizes: {small: {N: 4}}\ninputs: {}\noutputs: {y: {dtype: int32, shape: [N]}}\n"
      "reference: |\n  def forward(N: int) -> Tensor:\n      return torch.zeros(N, dtype=torch.int32)\n",
      "t/problem.yaml", "t");
  LaunchManifest manifest =
      std::move(parseLaunchManifest("/*@cuset\nlaunches: [{kernel: k, grid: [1], block: [1], args: [y]}]\n*/", problem)).value();
  LaunchPlan plan = std::move(planFromManifest(manifest, problem.sizes("small"))).value();
  RegionLayout layout = RegionLayout::plan(problem, plan, problem.sizes("small"));

  SimJob job(const std::filesystem::path& library) const {
    SimJob j;
    j.library = library;
    j.launches = plan.kernelSteps();
    j.layout = &layout;
    j.region = layout.fill({}, 0);
    return j;
  }
};

class SimBackend : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("CUSET_WORKER", CUSET_BINARY, 1); }
};

// A sim evaluation of `dir`/batch.jsonl, one line per (problem, model, source).
EvalConfig simBatch(const test::TempDir& dir, const std::vector<std::array<std::string, 3>>& candidates, int trials) {
  std::string batch;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& [problem, model, source] = candidates[i];
    batch += nlohmann::json{{"problem", problem}, {"sample", i}, {"model", model}, {"source", source}}.dump() + "\n";
  }
  test::writeText(dir / "batch.jsonl", batch);
  EvalConfig c;
  c.problemsDir = CUSET_PROBLEMS_DIR;
  c.candidatesPath = dir / "batch.jsonl";
  c.outDir = dir / "run";
  c.cacheDir = dir / "cache";
  c.backend = BackendKind::sim;
  c.jobs = 2;
  c.trials = trials;
  c.seed = 7;
  c.showProgress = false;
  return c;
}

TEST_F(SimBackend, EveryAdversarialKernelGetsItsVerdict) {
  test::TempDir dir;
  const auto cases = adversarialCases();
  std::vector<std::array<std::string, 3>> candidates;
  for (const Case& k : cases) candidates.push_back({k.problem, "adversary", k.source});
  EvalConfig c = simBatch(dir, candidates, 3);
  c.sandbox.timeout = std::chrono::milliseconds(1500);
  const EvalRunSummary s = runEvaluation(c);
  ASSERT_EQ(s.results.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const EvalResult& r = s.results[i];
    EXPECT_EQ(verdictName(r.verdict), verdictName(cases[i].expected)) << cases[i].name << ": " << r.reason << "\n" << r.compileLog;
    EXPECT_NE(r.reason.find(cases[i].reasonNeedle), std::string::npos) << cases[i].name << ": " << r.reason;
  }
  const EvalResult& good = s.results[0];
  EXPECT_EQ(good.trials, 4);  // 3 trials and the determinism rerun
  EXPECT_EQ(good.timingKind, "cpu_simulator");
  EXPECT_EQ(good.timingSamplesMs.size(), 4u);
  ASSERT_EQ(good.comparisons.size(), 1u);
  EXPECT_TRUE(good.comparisons[0].passed());
  const EvalResult& partial = s.results[2];
  ASSERT_EQ(partial.comparisons.size(), 1u);
  EXPECT_GT(partial.comparisons[0].mismatches, 0);
  EXPECT_EQ(partial.comparisons[0].firstMismatchIndex.size(), 2u);
}

// The race of issue #61 (a reduction's result read from s[0] while thread 0 already reuses s[0]): the
// simulator's thread-after-thread order gives wrong outputs, the race check names the race, and
// KernelBench's check, predicting a GPU whose warps run in lockstep, passes it as the GPU did.
TEST_F(SimBackend, ARaceInSharedMemoryIsNamedAndKernelBenchsLockstepPassesIt) {
  const std::string racy = R"(/*@cuset
launches:
  - {kernel: row_max, grid: [M], block: [32], args: [x, y, M, N]}
*/
extern "C" __global__ void row_max(const float* x, float* y, int M, int N) {
  __shared__ float s[32];
  const int c = threadIdx.x, row = blockIdx.x;
  float v = -INFINITY;
  for (int j = c; j < N; j += 32) v = fmaxf(v, x[(size_t)row * N + j]);
  s[c] = v;
  __syncthreads();
  for (int k = 16; k > 0; k >>= 1) {
    if (c < k) s[c] = fmaxf(s[c], s[c + k]);
    __syncthreads();
  }
  const float m = s[0];
  s[c] = 0.0f;
  __syncthreads();
  if (c == 31) y[row] = m;
})";
  test::TempDir dir;
  EvalConfig c = simBatch(dir, {{"level1/row_max", "racy", racy}}, 2);
  c.kernelbench.check = "always";
  c.kernelbench.gpu = "hopper";
  const EvalRunSummary s = runEvaluation(c);
  ASSERT_EQ(s.results.size(), 1u);
  const EvalResult& r = s.results[0];
  EXPECT_EQ(verdictName(r.verdict), "runtime_error") << r.reason;
  EXPECT_NE(r.reason.find("thread (1,0,0): a race in shared memory: this thread reads bytes thread (0,0,0) wrote"), std::string::npos) << r.reason;
  // The two accesses by their lines of the candidate (the manifest's comment is lines 1-4): thread 1's
  // read of s[0], thread 0's reuse of it.
  EXPECT_NE(r.reason.find("this access at line 16, the other at line 17)"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("the trials' outputs: trial 1 of 2: y:"), std::string::npos) << r.reason;
  ASSERT_TRUE(r.kernelbench && r.kernelbench->correct);
  EXPECT_TRUE(*r.kernelbench->correct) << r.kernelbench->issue;
  EXPECT_EQ(r.kernelbench->disagreement, "race_hidden_by_lockstep");
}

// Slow is not hung: a kernel still finishing blocks at the trial's limit runs on, up to the slow limit.
// One that finishes within it is judged as usual; one that does not is `unsupported` (the simulator's
// limit, never the model's timeout); one that stops finishing blocks (a spin after some blocks) is a
// `timeout`. `work` is the busy loop's length per thread (relu at small sizes: 250 blocks).
std::string slowRelu(int work, const std::string& hang = "") {
  return relu(
      fmt::format("volatile float acc = 0.0f;\n  for (int k = 0; k < {}; ++k) acc = acc + 1.0f;\n  {}\n"
                  "  if (i < n) y[i] = fmaxf(x[i], 0.0f) + (acc - {}.0f);",
                  work, hang, work));
}

TEST_F(SimBackend, ASlowKernelIsGivenTimeAndAHungOneIsNot) {
  test::TempDir dir;
  EvalConfig c = simBatch(dir,
                          {{"level1/relu", "slow_but_within_the_slow_limit", slowRelu(4000)},
                           {"level1/relu", "too_slow_to_simulate", slowRelu(40000)},
                           {"level1/relu", "hangs_after_some_blocks", slowRelu(10, "if (blockIdx.x == 20) while (i >= 0) { i = i * 1; }")}},
                          1);
  c.sandbox.timeout = std::chrono::milliseconds(300);
  c.sandbox.slowLimit = std::chrono::milliseconds(4000);
  const EvalRunSummary s = runEvaluation(c);
  ASSERT_EQ(s.results.size(), 3u);
  std::map<std::string, const EvalResult*> byModel;
  for (const auto& r : s.results) byModel[r.model] = &r;
  const EvalResult& slow = *byModel.at("slow_but_within_the_slow_limit");
  EXPECT_EQ(verdictName(slow.verdict), "correct") << slow.reason << " after " << slow.timingSamplesMs.size() << " samples";
  EXPECT_GT(slow.timingSamplesMs.at(0), 300.0) << "the kernel must outlast the trial's limit for this test to mean anything";
  const EvalResult& tooSlow = *byModel.at("too_slow_to_simulate");
  EXPECT_EQ(verdictName(tooSlow.verdict), "unsupported") << tooSlow.reason;
  EXPECT_NE(tooSlow.reason.find("too slow to simulate at these sizes: "), std::string::npos) << tooSlow.reason;
  EXPECT_NE(tooSlow.reason.find(" of 250 blocks after 4."), std::string::npos) << tooSlow.reason;
  EXPECT_NE(tooSlow.reason.find("--backend cuda"), std::string::npos) << tooSlow.reason;
  const EvalResult& hung = *byModel.at("hangs_after_some_blocks");
  EXPECT_EQ(verdictName(hung.verdict), "timeout") << hung.reason;
}

// The bytes after an odd-sized buffer, up to the end of its 16-byte granule, where no page fence can
// sit (sigmoid at `small`: 63 x 1001 floats, 252252 bytes, so 4 of them): a read there ends the launch
// as compute-sanitizer reports it, even when the value never reaches an output. Without the check
// (codegen.tailReadCheck = false) the same kernels are `correct`, which is what this test guards.
std::string sigmoid(const std::string& body) {
  return "/*@cuset\nlaunches:\n  - {kernel: sigmoid, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}\n*/\n"
         "extern \"C\" __global__ void sigmoid(const float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" +
         body + "\n}\n";
}
// Adds 0 whatever `v` holds (a guard byte pattern included), without the compiler knowing it.
std::string discard(const std::string& v) { return "fmaxf(fminf(" + v + ", 0.0f), 0.0f)"; }

std::vector<std::array<std::string, 3>> tailCases() {
  const std::string scalar = "if (i < n) y[i] = 1.0f / (1.0f + expf(-x[i]))";
  return {
      {"level1/sigmoid", "legal_float4_with_scalar_rest",
       sigmoid("if (4 * i + 3 < n) {\n    float4 v = reinterpret_cast<const float4*>(x)[i];\n"
               "    reinterpret_cast<float4*>(y)[i] = make_float4(1.0f / (1.0f + expf(-v.x)), 1.0f / (1.0f + expf(-v.y)), "
               "1.0f / (1.0f + expf(-v.z)), 1.0f / (1.0f + expf(-v.w)));\n  } else {\n"
               "    for (int j = 4 * i; j < n; ++j) y[j] = 1.0f / (1.0f + expf(-x[j]));\n  }")},
      {"level1/sigmoid", "float4_over_read_in_the_tail",
       sigmoid("if (4 * i < n) {\n    const float4 v = reinterpret_cast<const float4*>(x)[i];\n"
               "    const float e[4] = {v.x, v.y, v.z, v.w};\n    const float extra = " +
               discard("e[3]") +
               ";\n"
               "    for (int k = 0; k < 4 && 4 * i + k < n; ++k) y[4 * i + k] = 1.0f / (1.0f + expf(-e[k])) + extra;\n  }")},
      {"level1/sigmoid", "scalar_read_one_past_the_end", sigmoid(scalar + " + " + discard("x[i + 1]") + ";")},
      {"level1/sigmoid", "read_past_the_output_in_its_tail",
       sigmoid(scalar + ";\n  if (i == n - 1) y[i] += " + discard("*(volatile float*)(y + n)") + ";")},
      {"level1/sigmoid", "inline_ptx_over_read_in_the_tail",
       sigmoid("float a = 0.f, b = 0.f, c = 0.f, d = 0.f;\n"
               "  if (i == 0) asm(\"ld.global.v4.f32 {%0, %1, %2, %3}, [%4];\" : \"=f\"(a), \"=f\"(b), \"=f\"(c), \"=f\"(d) : \"l\"(x + (n & ~3)));\n"
               "  " +
               scalar + " + " + discard("a + b + c + d") + ";")},
  };
}

TEST_F(SimBackend, AReadOfTheBytesAfterAnOddSizedBufferEndsTheLaunch) {
  for (const bool checked : {true, false}) {
    SCOPED_TRACE(checked ? "with the tail check" : "without it");
    test::TempDir dir;
    const auto cases = tailCases();
    EvalConfig c = simBatch(dir, cases, 1);
    c.simCodegen.tailReadCheck = checked;
    const EvalRunSummary s = runEvaluation(c);
    ASSERT_EQ(s.results.size(), cases.size());
    std::map<std::string, const EvalResult*> byModel;
    for (const auto& r : s.results) byModel[r.model] = &r;
    const EvalResult& legal = *byModel.at("legal_float4_with_scalar_rest");
    EXPECT_EQ(verdictName(legal.verdict), "correct") << legal.reason << legal.compileLog;
    const std::map<std::string, std::string> expected = {
        // The host compiler loads the float4's lanes one by one (it keeps the loads whose values are used).
        {"float4_over_read_in_the_tail", "out-of-bounds read past the end of input 'x' by 4 byte(s) (a 252252-byte buffer; a "},
        {"scalar_read_one_past_the_end", "out-of-bounds read past the end of input 'x' by 4 byte(s) (a 252252-byte buffer; a 4-byte load"},
        {"read_past_the_output_in_its_tail", "out-of-bounds read past the end of output 'y' by 4 byte(s) (a 252252-byte buffer; a 4-byte load"},
        {"inline_ptx_over_read_in_the_tail", "past the end of input 'x' by 4 byte(s) (a 252252-byte buffer; a 16-byte load"},
    };
    for (const auto& [model, needle] : expected) {
      const EvalResult& r = *byModel.at(model);
      if (checked) {
        EXPECT_EQ(verdictName(r.verdict), "runtime_error") << model << ": " << r.reason << r.compileLog;
        EXPECT_NE(r.reason.find(needle), std::string::npos) << model << ": " << r.reason;
      } else {
        EXPECT_EQ(verdictName(r.verdict), model.starts_with("inline_ptx") ? "runtime_error" : "correct") << model << ": " << r.reason;
      }
    }
  }
}

TEST_F(SimBackend, AForbiddenSystemCallIsASandboxViolation) {
  // NVRTC would refuse a host call in device code, so this drives the sandbox directly with a library
  // built from host code, as a hostile source reaching the host compiler would.
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "cache");
  const auto built = compiler.compile(R"(extern "C" int getuid();
extern "C" __global__ void k(int* out) { out[0] = getuid(); })",
                                      {"k"});
  ASSERT_TRUE(built.ok) << built.log;
  const OneKernelJob fixture;
  SandboxPool pool(1, SandboxLimits{});
  SimJob job = fixture.job(built.library);
  const SimJobResult r = pool.run(job);
  EXPECT_EQ(r.status, SimJobResult::Status::sandboxViolation) << r.message;
  EXPECT_NE(r.message.find("getuid"), std::string::npos) << r.message;
  // Code that would run when the library loads, before the allow-list, never gets built.
  const auto constructor = compiler.compile(R"(extern "C" int getuid();
int stolen = getuid();
extern "C" __global__ void k(int* out) { out[0] = stolen; })",
                                            {"k"});
  EXPECT_FALSE(constructor.ok);
  EXPECT_NE(constructor.rejection.find("a constructor"), std::string::npos) << constructor.log;
  // The worker survives and serves the next job.
  const auto good = compiler.compile("extern \"C\" __global__ void k(int* out) { out[0] = 5; }", {"k"});
  job = fixture.job(good.library);
  EXPECT_EQ(pool.run(job).status, SimJobResult::Status::ok);
  EXPECT_EQ(fixture.layout.extract(job.region, *fixture.layout.find("y")).as<std::int32_t>()[0], 5);
}

// A library built by hand, past SimCompiler's refusal of load-time code, to test the sandbox's own
// defences while the library loads.
std::filesystem::path buildUnchecked(const test::TempDir& dir, const std::string& source) {
  const SimToolchain tc = SimToolchain::fromBuild();
  test::writeText(dir / "tu.cpp", simTranslationUnit(source, {"k"}));
  const auto built = runSubprocess({tc.compiler.string(), "-std=c++20", "-O1", "-fPIC", "-shared", "-w", "-I" + tc.simInclude.string(),
                                    "-I" + tc.cudaInclude.string(), (dir / "tu.cpp").string(), "-o", (dir / "lib.so").string(),
                                    "-L" + tc.simLibraryDir.string(), "-lcuset_sim", "-Wl,-rpath," + tc.simLibraryDir.string()},
                                   std::chrono::seconds(120));
  EXPECT_TRUE(built.ok()) << built.output;
  return dir / "lib.so";
}

TEST_F(SimBackend, CodeRunningAtLoadTimeCannotCreateProcessesOrFiles) {
  const OneKernelJob fixture;
  SandboxPool pool(1, SandboxLimits{});
  for (const auto& [attack, call] : std::vector<std::pair<std::string, std::string>>{
           {"extern \"C\" int fork();\nint result = fork();", "clone"},
           {"extern \"C\" int creat(const char*, unsigned);\nint result = creat(\"/tmp/cuset-load-time-file\", 0644);", "creat"},
           {"extern \"C\" int kill(int, int);\nint result = kill(1, 0);", "kill"}}) {
    test::TempDir dir;
    SimJob job = fixture.job(buildUnchecked(dir, attack + "\nextern \"C\" __global__ void k(int* out) { out[0] = result; }"));
    const SimJobResult r = pool.run(job);
    EXPECT_EQ(r.status, SimJobResult::Status::sandboxViolation) << attack << ": " << r.message;
    EXPECT_NE(r.message.find(call), std::string::npos) << r.message;
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/cuset-load-time-file"));
}

// Where Landlock is available, even code run by the loader reads no file but the library itself.
TEST_F(SimBackend, CodeRunningAtLoadTimeReadsNoOtherFile) {
  if (sandboxFileSystemIsolation().rfind("none", 0) == 0) GTEST_SKIP() << sandboxFileSystemIsolation();
  const OneKernelJob fixture;
  SandboxPool pool(1, SandboxLimits{});
  test::TempDir dir;
  SimJob job = fixture.job(buildUnchecked(dir, R"(extern "C" int open(const char*, int, ...);
int result = open("/etc/hostname", 0);
extern "C" __global__ void k(int* out) { out[0] = result; })"));
  const SimJobResult r = pool.run(job);
  ASSERT_EQ(r.status, SimJobResult::Status::ok) << r.message;
  EXPECT_LT(fixture.layout.extract(job.region, *fixture.layout.find("y")).as<std::int32_t>()[0], 0) << "open() of /etc/hostname succeeded";
}

TEST_F(SimBackend, RegionsComeBackTheSameThroughTheSharedFileAndThroughThePipe) {
  // A small region, then one larger than the shared file's first size (so it grows under a live
  // worker), then the small one again; each kernel writes its index into every element.
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "cache");
  const auto built = compiler.compile(R"(extern "C" __global__ void k(int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = i * 3 + 1;
})",
                                      {"k"});
  ASSERT_TRUE(built.ok) << built.log;
  const Problem problem = parseProblem(
      "name: t\nlevel: 1\nsizes: {small: {N: 1000}, big: {N: 1500000}}\ninputs: {}\noutputs: {y: {dtype: int32, shape: [N]}}\n"
      "reference: |\n  def forward(N: int) -> Tensor:\n      return torch.zeros(N, dtype=torch.int32)\n",
      "t/problem.yaml", "t");
  const LaunchManifest manifest =
      std::move(parseLaunchManifest("/*@cuset\nlaunches: [{kernel: k, grid: [ceil_div(N, 256)], block: [256], args: [y, N]}]\n*/", problem)).value();
  for (const bool shared : {true, false}) {
    SandboxLimits limits;
    limits.sharedPayload = shared;
    SandboxPool pool(1, limits);
    for (const char* sizeSet : {"small", "big", "small"}) {
      SCOPED_TRACE(fmt::format("shared payload {}, sizes {}", shared, sizeSet));
      const SizeBindings& sizes = problem.sizes(sizeSet);
      const LaunchPlan plan = std::move(planFromManifest(manifest, sizes)).value();
      const RegionLayout layout = RegionLayout::plan(problem, plan, sizes);
      SimJob job;
      job.library = built.library;
      job.fibers = false;
      job.launches = plan.kernelSteps();
      job.layout = &layout;
      job.region = layout.fill({}, 0);
      const SimJobResult r = pool.run(job);
      ASSERT_EQ(r.status, SimJobResult::Status::ok) << r.message;
      ASSERT_EQ(job.region.size(), layout.totalBytes());
      EXPECT_FALSE(layout.findGuardViolation(job.region).has_value());
      const HostTensor y = layout.extract(job.region, *layout.find("y"));
      const auto values = y.as<std::int32_t>();
      int wrong = 0;
      ASSERT_EQ(y.numel(), sizes.at("N"));
      for (std::int64_t i = 0; i < y.numel(); ++i) wrong += values[i] != static_cast<std::int32_t>(i * 3 + 1);
      EXPECT_EQ(wrong, 0);
    }
  }
}

// The default address-space limit shares three quarters of the machine among the workers, so jobs x
// limit never exceeds it (16 GiB each, the old default, did on a 24 GiB machine with two jobs).
TEST(SandboxMemory, TheDefaultLimitSharesTheMachine) {
  const double machine = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  for (std::size_t workers : {1, 2, 4, 16}) {
    const double each = static_cast<double>(defaultSandboxMemory(workers));
    EXPECT_LE(each, 16.0 * (1 << 30));
    EXPECT_GE(each, 1.0 * (1 << 30));
    if (machine * 0.75 / static_cast<double>(workers) >= 1.0 * (1 << 30)) {
      EXPECT_LE(each * static_cast<double>(workers), machine * 0.75 + 1) << workers;
    }
  }
  EXPECT_EQ(defaultSandboxMemory(100000), std::size_t{1} << 30);
  EXPECT_EQ(SandboxPool(1, SandboxLimits{}).limits().memoryBytes, defaultSandboxMemory(1));
}

// The bundled suite (good solutions correct, bad ones their expected verdict) is checked by the ctest
// `problem_suite_solutions` (`cuset problems check --solutions`).

}  // namespace
}  // namespace cuset
