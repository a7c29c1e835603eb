// KernelBench run folders (`level_1_problem_19_sample_0_kernel.py`) as candidates, and KernelBench's
// static checker reproduced (docs/kernelbench.md "Replacing eval_from_generations.py").
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_run_folder.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_static_check.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// A one-problem suite whose problem says it was imported from KernelBench's level 1, problem 19.
void writeImportedProblem(const fs::path& suite) {
  const fs::path dir = suite / "level1" / "kb19_relu";
  test::writeText(dir / "kernelbench_source.py", "import torch\n");
  test::writeText(dir / "problem.yaml", R"(name: kb19_relu
level: 1
description: ReLU.
sizes:
  small: {N: 64}
inputs:
  x: {dtype: float32, shape: [N]}
outputs:
  y: {dtype: float32, shape: [N]}
reference: |
  def forward(x: Tensor) -> Tensor:
      return torch.relu(x)
origin: {suite: kernelbench, commit: abc, level: 1, number: 19, file: level1/19_ReLU.py, source: kernelbench_source.py}
)");
}

TEST(KernelBenchRunFolder, FileNamesGiveLevelProblemAndSample) {
  auto parsed = parseKernelBenchRunFileName("level_2_problem_76_sample_3_kernel.py");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first.level, 2);
  EXPECT_EQ(parsed->first.number, 76);
  EXPECT_EQ(parsed->second, 3);
  for (const char* other : {"level_2_problem_76_sample_3_prompt.txt", "level_2_problem_76_sample_3_kernel.py.bak",
                            "level_x_problem_1_sample_0_kernel.py", "generation_config.yaml", "solution.py"}) {
    EXPECT_FALSE(parseKernelBenchRunFileName(other)) << other;
  }
}

TEST(KernelBenchRunFolder, ReadsKernelFilesIgnoresPromptsAndResolvesToTheImportedProblem) {
  test::TempDir dir;
  const fs::path run = dir.path() / "runs" / "my_run";
  test::writeText(run / "level_1_problem_19_sample_0_kernel.py", "class ModelNew: ...\n");
  test::writeText(run / "level_1_problem_19_sample_1_kernel.py", "class ModelNew: ...\n");
  test::writeText(run / "level_1_problem_19_sample_0_prompt.txt", "Write a kernel\n");
  test::writeText(run / "level_1_problem_20_sample_0_kernel.py", "class ModelNew: ...\n");
  test::writeText(run / "generation_config.yaml", "model: x\n");
  writeImportedProblem(dir.path() / "suite");
  const ProblemSuite suite = ProblemSuite::load(dir.path() / "suite");

  std::vector<Candidate> cands = readCandidates(run, "my_run");
  ASSERT_EQ(cands.size(), 3u);  // the prompt and the generation config are no candidates
  resolveKernelBenchRunFiles(cands, suite);
  EXPECT_EQ(cands[0].problemId, "level1/kb19_relu");
  EXPECT_EQ(cands[0].sample, 0);
  EXPECT_EQ(cands[1].problemId, "level1/kb19_relu");
  EXPECT_EQ(cands[1].sample, 1);
  EXPECT_TRUE(cands[0].readError.empty()) << cands[0].readError;
  EXPECT_EQ(cands[0].model, "my_run");
  EXPECT_NE(cands[2].readError.find("KernelBench level 1 problem 20 is not in the suite"), std::string::npos) << cands[2].readError;
  EXPECT_EQ(kernelBenchRunFileProblems(run), (std::set<std::pair<int, int>>{{1, 19}, {1, 20}}));
  EXPECT_THROW(kernelBenchRunFileProblems(dir.path() / "suite"), Error);  // names none
}

TEST(KernelBenchRunFolder, GenerateWritesKernelBenchFileNames) {
  test::TempDir dir;
  writeImportedProblem(dir.path() / "suite");
  const ProblemSuite suite = ProblemSuite::load(dir.path() / "suite");
  std::vector<Candidate> cands(3);
  cands[0] = {.problemId = "level1/kb19_relu", .sample = 4, .source = "class ModelNew: pass\n", .origin = "a.jsonl:1"};
  cands[1] = {.problemId = "level1/kb19_relu", .sample = 5, .origin = "a.jsonl:2", .readError = "a.jsonl:2: response has no fenced code block"};
  cands[2] = {.problemId = "level1/softmax", .sample = 0, .source = "x", .origin = "a.jsonl:3"};
  const KernelBenchRunFolderWrite w = writeKernelBenchRunFolder(cands, suite, dir.path() / "run");
  EXPECT_EQ(w.written, 1u);
  ASSERT_EQ(w.skipped.size(), 2u);
  EXPECT_NE(w.skipped[1].find("not a problem imported from KernelBench"), std::string::npos);
  EXPECT_EQ(test::readText(dir.path() / "run" / "level_1_problem_19_sample_4_kernel.py"), "class ModelNew: pass\n");
}

std::vector<std::string> checks(const std::string& source, const char* precision = "fp32", const char* backend = "cuda") {
  std::vector<std::string> out;
  for (const auto& f : kernelBenchStaticFindings(source, precision, backend)) out.push_back(f.check + (f.strict ? "!" : ""));
  return out;
}

const std::string kKernel = R"(from torch.utils.cpp_extension import load_inline
src = """
__global__ void k(float* y) { y[threadIdx.x] = 0; }
"""
)";

TEST(KernelBenchStaticChecker, AnHonestKernelHasNoFinding) { EXPECT_TRUE(checks(kKernel).empty()); }

TEST(KernelBenchStaticChecker, NamesEachOfItsChecks) {
  EXPECT_EQ(checks(kKernel + "try:\n    x = 1\nexcept Exception:\n    x = 2\n"), std::vector<std::string>{"code_bypass!"});
  EXPECT_EQ(checks(kKernel + "class ModelNew(Model):\n    pass\n"), std::vector<std::string>{"code_bypass!"});
  EXPECT_EQ(checks(kKernel + "torch.cuda.synchronize = lambda: None\n"), std::vector<std::string>{"timing_event_patch!"});
  EXPECT_EQ(checks(kKernel + "import threading\n"), std::vector<std::string>{"thread_injection!"});
  EXPECT_EQ(checks(kKernel + "class Lazy(torch.Tensor):\n    x = 1\n"), std::vector<std::string>{"lazy_eval!"});
  EXPECT_EQ(checks("import torch\nclass ModelNew: x = 1\n"), std::vector<std::string>{"cuda_impl!"});
  EXPECT_EQ(checks(kKernel + "self.conv = torch.nn.Conv2d(3, 3, 3)\n"), std::vector<std::string>{"pytorch_wrap"});
  EXPECT_EQ(checks(kKernel + "return torch.matmul(a, b)\n"), std::vector<std::string>{"torch_computation_ops"});
  EXPECT_EQ(checks(kKernel + "return F.relu(a)\n"), std::vector<std::string>{"torch_computation_ops"});
  EXPECT_EQ(checks(kKernel + "s = torch.cuda.Stream()\n"), std::vector<std::string>{"stream_injection"});
  EXPECT_EQ(checks(kKernel + "y = x.half()\n"), std::vector<std::string>{"precision_downgrade"});
  EXPECT_TRUE(checks(kKernel + "y = x.half()\n", "fp16").empty());  // only a downgrade from fp32 counts
}

TEST(KernelBenchStaticChecker, CommentsAreCutAsKernelBenchCutsThem) {
  EXPECT_TRUE(checks(kKernel + "# try: the old version used torch.matmul\n// pass\n").empty());
  // The nn containers and Parameter are allowed; a word containing "pass" is not the statement.
  EXPECT_TRUE(checks(kKernel + "w = torch.nn.Parameter(x)\nm = torch.nn.ModuleList()\nbypassed = 1\n").empty());
}

const std::string kTritonKernel = R"(import triton
import triton.language as tl
@triton.jit
def k(y_ptr, BLOCK: tl.constexpr):
    tl.store(y_ptr + tl.arange(0, BLOCK), 0.0)
)";

TEST(KernelBenchStaticChecker, TheTritonBackendHasItsOwnImplementationCheck) {
  EXPECT_TRUE(checks(kTritonKernel, "fp32", "triton").empty());
  // A CUDA solution under backend="triton" misses Triton's kernel, and a Triton one under "cuda" CUDA's.
  EXPECT_EQ(checks(kKernel, "fp32", "triton"), std::vector<std::string>{"triton_impl!"});
  EXPECT_EQ(checks(kTritonKernel, "fp32", "cuda"), std::vector<std::string>{"cuda_impl!"});
  EXPECT_EQ(checks("import triton\n@triton.jit\ndef k(y):\n    return y\n", "fp32", "triton"), std::vector<std::string>{"triton_impl!"});
  EXPECT_EQ(checks(kTritonKernel + "    v = tl.astype(x, tl.float16)\n", "fp32", "triton"), std::vector<std::string>{"precision_downgrade"});
}

TEST(KernelBenchStaticChecker, ATritonKernelIsOneItsDecoratorDefines) {
  EXPECT_TRUE(hasTritonKernel(kTritonKernel));
  EXPECT_TRUE(hasTritonKernel("@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(x): pass\n"));
  EXPECT_FALSE(hasTritonKernel(kKernel));
  EXPECT_FALSE(hasTritonKernel("import triton\n# @triton.jit was tried and dropped\n"));
}

// The published corpora (../shared, skipped without it): every solution its labels call a Triton ModelNew
// is read as Triton (of the other two, one defines Triton kernels without a ModelNew, one neither), every
// file of a KernelBench Triton run folder is, and no CUDA solution is.
TEST(KernelBenchStaticChecker, ThePublishedSolutionsAreReadInTheirOwnLanguage) {
  const fs::path shared = fs::path(CUSET_SOURCE_DIR) / ".." / "shared";
  const fs::path llmkernel = shared / "triton-solutions" / "llmkernel";
  if (!fs::exists(llmkernel / "labels_derived.jsonl") || !fs::exists(shared / "kernelbench-solutions")) GTEST_SKIP() << "no ../shared corpora";
  std::ifstream labels(llmkernel / "labels_derived.jsonl");
  int triton = 0, other = 0;
  for (std::string line; std::getline(labels, line);) {
    const auto label = nlohmann::json::parse(line);
    const bool isTriton = label.at("is_triton_modelnew").get<bool>();
    if (isTriton) {
      EXPECT_TRUE(hasTritonKernel(test::readText(llmkernel / label.at("kernel").get<std::string>()))) << label.at("kernel");
    }
    (isTriton ? triton : other) += 1;
  }
  EXPECT_GT(triton, 1000);
  EXPECT_LE(other, 2);
  int runFolder = 0, cuda = 0;
  for (const auto& e : fs::recursive_directory_iterator(shared / "triton-solutions" / "kernelbench-l2-kimi-grok")) {
    if (e.path().extension() != ".py") continue;
    EXPECT_TRUE(hasTritonKernel(test::readText(e.path()))) << e.path();
    ++runFolder;
  }
  for (const auto& e : fs::recursive_directory_iterator(shared / "kernelbench-solutions")) {
    if (e.path().extension() != ".py") continue;
    EXPECT_FALSE(hasTritonKernel(test::readText(e.path()))) << e.path();
    ++cuda;
  }
  EXPECT_EQ(runFolder, 200);
  EXPECT_GE(cuda, 250);
}

TEST(KernelBenchStaticChecker, AHugeLineDoesNotExhaustTheStack) {
  const std::string hostile = kKernel + "class A" + std::string(4 << 20, 'x') + "(torch.Tensor):\n";
  EXPECT_NO_THROW(kernelBenchStaticFindings(hostile, "fp32"));
}

}  // namespace
}  // namespace cuset
