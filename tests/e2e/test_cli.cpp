// Whole-CLI tests: run the real `cuset` binary as a user would.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace cuset {
namespace {

struct CliRun {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

CliRun cuset(const std::string& args, const std::string& environment = "") {
  const std::string command = std::string("cd ") + CUSET_SOURCE_DIR + " && " + environment + " " + CUSET_BINARY + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Cli, HelpListsSubcommands) {
  const CliRun r = cuset("--help");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.output.find("problems"), std::string::npos);
  EXPECT_NE(r.output.find("eval"), std::string::npos);
  EXPECT_EQ(cuset("eval --help").exitCode, 0);
  EXPECT_NE(cuset("").exitCode, 0);
}

TEST(Cli, ProblemsListShowCheck) {
  const CliRun list = cuset("problems list");
  EXPECT_EQ(list.exitCode, 0) << list.output;
  EXPECT_NE(list.output.find("level1/softmax_rows"), std::string::npos);
  const CliRun show = cuset("problems show level1/softmax_rows");
  EXPECT_EQ(show.exitCode, 0);
  EXPECT_NE(show.output.find("torch.softmax"), std::string::npos);
  const CliRun missing = cuset("problems show level1/nope");
  EXPECT_NE(missing.exitCode, 0);
  EXPECT_NE(missing.output.find("no problem 'level1/nope'"), std::string::npos);
  const CliRun check = cuset("problems check --seed 7");
  EXPECT_EQ(check.exitCode, 0) << check.output;
  EXPECT_NE(check.output.find("0 failed"), std::string::npos);
}

TEST(Cli, ProblemsCheckFailsOnADegenerateProblem) {
  test::TempDir dir;
  test::writeText(dir / "level1/zero/problem.yaml",
                  "name: zero\nlevel: 1\nsizes: {small: {N: 100}}\ninputs: {x: {dtype: float32, shape: [N]}}\n"
                  "outputs: {y: {dtype: float32, shape: [N]}}\nreference: |\n  def forward(x: Tensor) -> Tensor:\n      return x * 0.0\n");
  const CliRun r = cuset("problems check --problems " + dir.path().string());
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("degenerate"), std::string::npos) << r.output;
}

TEST(Cli, EvalBundledSolutionsAllCompile) {
  test::TempDir dir;
  const CliRun r =
      cuset("eval --backend compile-only --candidates problems --out " + (dir / "run").string() + " --cache-dir " + (dir / "cache").string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("compiled"), std::string::npos);
  EXPECT_EQ(r.output.find("compile_error"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("invalid_submission"), std::string::npos) << r.output;
  const std::string results = test::readText(dir / "run/results.jsonl");
  std::size_t lines = 0;
  for (std::size_t pos = 0; (pos = results.find('\n', pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_GE(lines, 5u);
  // The same run again refuses to overwrite; --resume finishes at once.
  EXPECT_NE(cuset("eval --backend compile-only --candidates problems --out " + (dir / "run").string()).exitCode, 0);
  const CliRun resumed = cuset("eval --backend compile-only --candidates problems --resume --out " + (dir / "run").string());
  EXPECT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("0 evaluated now"), std::string::npos) << resumed.output;
}

TEST(Cli, EvalSimBackendJudgesGoodAndBadSolutions) {
  test::TempDir dir;
  const CliRun r = cuset("eval --backend sim --candidates problems/level1/leaky_relu --jobs 2 --out " + (dir / "run").string() + " --cache-dir " +
                         (dir / "cache").string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string results = test::readText(dir / "run/results.jsonl");
  EXPECT_NE(results.find("\"verdict\":\"correct\""), std::string::npos) << results;
  EXPECT_NE(results.find("\"verdict\":\"runtime_error\""), std::string::npos) << results;  // bad_out_of_bounds.cu
  EXPECT_NE(results.find("\"kind\":\"cpu_simulator\""), std::string::npos);
  EXPECT_NE(test::readText(dir / "run/run.json").find("never reported as a speedup"), std::string::npos);
  // eval writes the run's reports too.
  EXPECT_NE(r.output.find("report: "), std::string::npos) << r.output;
  EXPECT_NE(test::readText(dir / "run/junit.xml").find("runtime_error: trial"), std::string::npos);
  EXPECT_NE(test::readText(dir / "run/report.html").find("level1/leaky_relu"), std::string::npos);

  // `cuset report --compare` against itself: nothing worse, exit 0 even with --fail-on-regression.
  const std::string run = (dir / "run").string();
  const CliRun same = cuset("report " + run + " --compare " + run + " --fail-on-regression");
  EXPECT_EQ(same.exitCode, 0) << same.output;
  EXPECT_NE(same.output.find("worse 0"), std::string::npos) << same.output;

  // A base in which the bad solution was correct: the run regressed, and --fail-on-regression says so.
  std::filesystem::create_directories(dir / "base");
  std::string baseResults = results;
  const std::string failed = "\"verdict\":\"runtime_error\"";
  for (std::size_t at; (at = baseResults.find(failed)) != std::string::npos;) baseResults.replace(at, failed.size(), "\"verdict\":\"correct\"");
  test::writeText(dir / "base/results.jsonl", baseResults);
  const CliRun worse = cuset("report " + run + " --compare " + (dir / "base").string() + " --fail-on-regression");
  EXPECT_EQ(worse.exitCode, 3) << worse.output;
  EXPECT_NE(worse.output.find("worse 1"), std::string::npos) << worse.output;
  EXPECT_EQ(cuset("report " + run + " --compare " + (dir / "base").string()).exitCode, 0);  // without the flag: report only
  EXPECT_NE(cuset("report " + (dir / "nowhere").string()).exitCode, 0);
}

// A suite whose bad solution expects the wrong verdict, and one whose only solution fails: both make
// `problems check --solutions` exit 1 and say why.
TEST(Cli, ProblemsCheckSolutionsFailsOnAnUnexpectedVerdict) {
  test::TempDir dir;
  const std::string yaml =
      "name: double\nlevel: 1\nsizes: {small: {N: 1000}, full: {N: 1000000}}\ninputs: {x: {dtype: float32, shape: [N]}}\n"
      "outputs: {y: {dtype: float32, shape: [N]}}\nreference: |\n  def forward(x: Tensor) -> Tensor:\n      return x * 2.0\n";
  const std::string manifest = "/*@cuset\nlaunches:\n  - kernel: k\n    grid: [ceil_div(N, 128)]\n    block: [128]\n    args: [x, y, N]\n*/\n";
  test::writeText(dir / "level1/double/problem.yaml", yaml);
  test::writeText(dir / "level1/double/solutions/good.cu",
                  manifest +
                      "extern \"C\" __global__ void k(const float* x, float* y, int n) {\n"
                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.0f * x[i];\n}\n");
  // Its bug (a missing tail element) is a wrong answer, but it claims a runtime error.
  test::writeText(dir / "level1/double/solutions/bad_tail.cu",
                  manifest +
                      "// @expect: runtime_error\nextern \"C\" __global__ void k(const float* x, float* y, int n) {\n"
                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n - 1) y[i] = 2.0f * x[i];\n}\n");
  const std::string args = "problems check --solutions --seed 3 --problems " + dir.path().string() + " --out " + (dir / "run").string();
  CliRun r = cuset(args);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("expected runtime_error, got wrong_answer"), std::string::npos) << r.output;

  test::writeText(dir / "level1/double/solutions/bad_tail.cu",
                  test::readText(dir / "level1/double/solutions/bad_tail.cu")
                      .replace(test::readText(dir / "level1/double/solutions/bad_tail.cu").find("runtime_error"), 13, "wrong_answer"));
  std::filesystem::remove_all(dir / "run");
  r = cuset(args);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("2 solution(s) checked (1 known-bad): 2 as expected, 0 failed"), std::string::npos) << r.output;
}

TEST(Cli, ProblemsTableIsCurrentAndDetectsStaleness) {
  EXPECT_EQ(cuset("problems table --check problems/README.md").exitCode, 0);
  test::TempDir dir;
  test::writeText(dir / "README.md",
                  "# x\n<!-- BEGIN generated by `cuset problems table` -->\nold\n<!-- END generated by `cuset problems table` -->\n");
  const std::string file = (dir / "README.md").string();
  const CliRun stale = cuset("problems table --check " + file);
  EXPECT_EQ(stale.exitCode, 1);
  EXPECT_NE(stale.output.find("stale"), std::string::npos) << stale.output;
  EXPECT_EQ(cuset("problems table --update " + file).exitCode, 0);
  EXPECT_EQ(cuset("problems table --check " + file).exitCode, 0);
  EXPECT_NE(test::readText(dir / "README.md").find("level1/softmax_rows"), std::string::npos);
  EXPECT_NE(cuset("problems table --check " + (dir / "missing.md").string()).exitCode, 0);
}

// Without a GPU, `--backend cuda` fails at the run stage with one line saying what is missing; the
// toolkit's stub library is recognised as such.
TEST(Cli, CudaBackendWithoutAGpuFailsWithOneClearLine) {
  test::TempDir dir;
  const std::string args = "eval --backend cuda --candidates problems/level1/relu --out " + (dir / "run").string();
  const CliRun r = cuset(args);
  if (r.exitCode == 0) GTEST_SKIP() << "a GPU is available here";
  EXPECT_NE(r.output.find("cuset: error: the cuda backend cannot use a GPU: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libcuda"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  const std::string stub = std::string(CUSET_CUDA_STUBS_DIR) + "/libcuda.so";
  if (!std::filesystem::exists(stub)) return;
  const CliRun withStub = cuset("eval --backend cuda --candidates problems/level1/relu --out " + (dir / "run2").string(), "CUSET_LIBCUDA=" + stub);
  EXPECT_NE(withStub.exitCode, 0);
  EXPECT_NE(withStub.output.find("is the CUDA toolkit's stub library, not a driver"), std::string::npos) << withStub.output;
}

// `cuset doctor` reports what the build has and what the machine offers: a LibTorch 2.x, the sim
// backend, the sandbox's seccomp and the project's Python; the cuda line follows the driver (none: why
// not, and the command still succeeds; the fake driver: its GPU); a Python that cannot import torch
// fails the command and names the fix.
TEST(Cli, DoctorReportsTheBuildTheBackendsAndThePython) {
  auto check = [](const nlohmann::json& report, const std::string& name) {
    for (const auto& c : report["checks"]) {
      if (c["name"] == name) return c;
    }
    ADD_FAILURE() << "no check named " << name << " in " << report.dump();
    return nlohmann::json::object();
  };
  const CliRun noDriver = cuset("doctor --json", "CUSET_LIBCUDA=/nonexistent/libcuda.so.1");
  ASSERT_EQ(noDriver.exitCode, 0) << noDriver.output;
  const auto report = nlohmann::json::parse(noDriver.output);
  EXPECT_TRUE(report["ok"].get<bool>());
  EXPECT_NE(check(report, "libtorch")["detail"].get<std::string>().find("LibTorch 2."), std::string::npos);
  EXPECT_TRUE(check(report, "sim")["ok"].get<bool>());
  EXPECT_TRUE(check(report, "seccomp")["ok"].get<bool>());
  EXPECT_NE(check(report, "environment")["detail"].get<std::string>().find("torch 2."), std::string::npos);
  const auto cuda = check(report, "cuda");
  EXPECT_FALSE(cuda["ok"].get<bool>());
  EXPECT_FALSE(cuda["required"].get<bool>());
  EXPECT_NE(cuda["detail"].get<std::string>().find("/nonexistent/libcuda.so.1"), std::string::npos) << cuda.dump();

  const CliRun fake = cuset("doctor --json", std::string("CUSET_LIBCUDA=") + CUSET_FAKE_LIBCUDA);
  ASSERT_EQ(fake.exitCode, 0) << fake.output;
  const auto withGpu = check(nlohmann::json::parse(fake.output), "cuda");
  EXPECT_TRUE(withGpu["ok"].get<bool>());
  EXPECT_NE(withGpu["detail"].get<std::string>().find("1 GPU(s): CuSeT fake GPU"), std::string::npos) << withGpu.dump();

  const CliRun noPython = cuset("doctor", "CUSET_PYTHON=/nonexistent/bin/python");
  EXPECT_EQ(noPython.exitCode, 1) << noPython.output;
  EXPECT_NE(noPython.output.find("MISSING"), std::string::npos) << noPython.output;
  EXPECT_NE(noPython.output.find("fix: bash scripts/install-deps.sh"), std::string::npos) << noPython.output;
  EXPECT_NE(noPython.output.find("not ready"), std::string::npos) << noPython.output;
}

// The driver's other failures, played by the fake driver (tests/evaluator/cuda/fake_driver): each one line
// naming the library and what to do.
TEST(Cli, CudaBackendSaysWhatIsWrongWithTheDriver) {
  test::TempDir dir;
  const std::string args = "eval --backend cuda --candidates problems/level1/relu --out " + (dir / "run").string();
  const std::string fake = std::string("CUSET_LIBCUDA=") + CUSET_FAKE_LIBCUDA;
  const CliRun noDevice = cuset(args, fake + " CUSET_FAKE_CUDA_DEVICES=0");
  EXPECT_NE(noDevice.exitCode, 0);
  EXPECT_NE(noDevice.output.find("the driver sees no CUDA device; on a machine without an NVIDIA GPU use --backend sim"), std::string::npos)
      << noDevice.output;
  EXPECT_EQ(std::count(noDevice.output.begin(), noDevice.output.end(), '\n'), 1) << noDevice.output;
  const CliRun old = cuset(args, fake + " CUSET_FAKE_CUDA_DRIVER_VERSION=11080");
  EXPECT_NE(old.exitCode, 0);
  EXPECT_NE(old.output.find("supports CUDA 11.8, older than the 12.0 the cuda backend needs: update the NVIDIA driver"), std::string::npos)
      << old.output;
  EXPECT_EQ(std::count(old.output.begin(), old.output.end(), '\n'), 1) << old.output;
}

// With no --backend, a run takes the GPU when one is usable and the simulator otherwise, and says so
// first, with the reason, and in run.json.
TEST(Cli, EvalChoosesItsBackendAndSaysWhy) {
  test::TempDir dir;
  const std::string args = "eval --candidates problems/level1/relu --trials 1 --cache-dir " + (dir / "cache").string() + " --out ";
  const std::string fake = std::string("CUSET_LIBCUDA=") + CUSET_FAKE_LIBCUDA;
  const CliRun noGpu = cuset(args + (dir / "sim").string(), fake + " CUSET_FAKE_CUDA_DEVICES=0");
  ASSERT_EQ(noGpu.exitCode, 0) << noGpu.output;
  EXPECT_EQ(noGpu.output.rfind("backend: sim (auto: no usable GPU (", 0), 0u) << noGpu.output;
  EXPECT_NE(noGpu.output.find("the driver sees no CUDA device"), std::string::npos) << noGpu.output;
  const nlohmann::json simRun = nlohmann::json::parse(test::readText(dir / "sim/run.json"));
  EXPECT_EQ(simRun["backend"], "sim");
  EXPECT_EQ(simRun["backend_requested"], "auto");
  EXPECT_NE(simRun["backend_reason"].get<std::string>().find("no CUDA device"), std::string::npos);
  EXPECT_NE(test::readText(dir / "sim/results.jsonl").find("\"verdict\":\"correct\""), std::string::npos);

  const CliRun gpu = cuset(args + (dir / "gpu").string() + " --no-timing --sizes small", fake);
  ASSERT_EQ(gpu.exitCode, 0) << gpu.output;
  EXPECT_EQ(gpu.output.rfind("backend: cuda (auto: a usable GPU: CuSeT fake GPU", 0), 0u) << gpu.output;
  EXPECT_EQ(nlohmann::json::parse(test::readText(dir / "gpu/run.json"))["backend"], "cuda");
}

TEST(Cli, LexPrintsSensitiveSpans) {
  test::TempDir dir;
  test::writeText(dir / "k.cu", "__global__ void k() {\n  // __syncthreads();\n  atomicAdd(p, 1);\n}\n");
  const CliRun r = cuset("lex --input " + (dir / "k.cu").string());
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output, "0\t10\tqualifier\t__global__\n46\t55\tatomic\tatomicAdd\n");
  test::writeText(dir / "k.jsonl", "\"__syncwarp();\"\n{\"not\": \"a string\"}\n");
  const CliRun bad = cuset("lex --jsonl --input " + (dir / "k.jsonl").string());
  EXPECT_NE(bad.exitCode, 0);
  EXPECT_NE(bad.output.find("[{\"category\":\"sync\",\"end\":10,\"start\":0}]"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("k.jsonl:2: expected a JSON string"), std::string::npos) << bad.output;
}

// A candidate with a Latin-1 comment is judged, and the run's reports are written (before: a raw
// json.exception.type_error.316 from `cuset eval`, `--resume` and `cuset report`).
TEST(Cli, TextThatIsNotUtf8DoesNotStopARun) {
  test::TempDir dir;
  std::string source = test::readText(std::filesystem::path(CUSET_SOURCE_DIR) / "problems/level1/relu/solutions/grid_stride.cu");
  test::writeText(dir / "cands/level1/relu/latin1.cu", source + "\n// r\xe9sum\xe9\n");
  const std::string args = "eval --backend compile-only --candidates " + (dir / "cands").string() + " --out " + (dir / "run").string();
  const CliRun r = cuset(args);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("compiled"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "run/report.html"));
  EXPECT_EQ(cuset("eval --backend compile-only --resume --candidates " + (dir / "cands").string() + " --out " + (dir / "run").string()).exitCode, 0);
  EXPECT_EQ(cuset("report " + (dir / "run").string()).exitCode, 0);
}

// Each job is a worker process with its own memory budget: an absurd count is capped, and said so.
TEST(Cli, AbsurdJobCountsAreCappedWithAWarning) {
  test::TempDir dir;
  test::writeText(dir / "cands/level1/relu/a.cu",
                  test::readText(std::filesystem::path(CUSET_SOURCE_DIR) / "problems/level1/relu/solutions/grid_stride.cu"));
  const CliRun r = cuset("eval --backend compile-only --jobs 99999 --candidates " + (dir / "cands").string() + " --out " + (dir / "run").string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("--jobs 99999 is more than 4 per core"), std::string::npos) << r.output;
}

// A checkpoint that cannot be written (here: a file-size limit standing in for a full disk) ends the
// run with one line naming the file; the checkpoint before it stays whole and `latest` points at it.
TEST(Cli, ACheckpointThatCannotBeWrittenDamagesNothing) {
  test::TempDir dir;
  test::writeText(dir / "c.yaml", test::tinyTrainConfig(6));
  const std::string train = "train -q --config " + (dir / "c.yaml").string() + " --out " + (dir / "run").string();
  ASSERT_EQ(cuset(train + " --max-steps 3").exitCode, 0);
  const CliRun full = cuset(train + " --resume", "ulimit -f 200;");
  EXPECT_EQ(full.exitCode, 2) << full.output;
  EXPECT_EQ(std::count(full.output.begin(), full.output.end(), '\n'), 2) << full.output;  // "resuming ..." and the error
  EXPECT_NE(full.output.find("cuset: error:"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("step-6.tmp"), std::string::npos) << full.output;
  EXPECT_EQ(test::readText(dir / "run/checkpoints/latest"), "step-3");
  EXPECT_FALSE(std::filesystem::exists(dir / "run/checkpoints/step-6.tmp"));
  // The surviving checkpoint resumes.
  EXPECT_EQ(cuset(train + " --resume").exitCode, 0);
  EXPECT_EQ(test::readText(dir / "run/checkpoints/latest"), "step-6");
}

TEST(Cli, EvalBadInputsGiveOneClearError) {
  test::TempDir dir;
  const CliRun missing = cuset("eval --candidates /nonexistent.jsonl --out " + (dir / "r").string());
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.output.find("/nonexistent.jsonl"), std::string::npos);
  const CliRun arch = cuset("eval --candidates problems --arch sm_1 --no-cache --out " + (dir / "r2").string());
  EXPECT_EQ(arch.exitCode, 2);
  EXPECT_NE(arch.output.find("does not support"), std::string::npos) << arch.output;
  const CliRun backend = cuset("eval --candidates problems --backend magic");
  EXPECT_NE(backend.exitCode, 0);
}

}  // namespace
}  // namespace cuset
