// The KernelBench translation's parts: the source splitter, the checks of a recording, library steps
// through LibTorch's dispatcher, and (with the project's Python and its torch) whole translations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <variant>

#include "cuset/common/file_util.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/candidate/library_call.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/kernelbench/cuda_source_split.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"
#include "cuset/evaluator/kernelbench/recorded_plan.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

using nlohmann::json;

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

const std::string kSource = R"(#include <torch/extension.h>
#include <vector>
#include <cuda_fp16.h>
namespace {
template <typename scalar_t>
__global__ void __launch_bounds__(256) scale(const scalar_t* x, scalar_t* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * s;  // a "{" in a comment
}
__device__ inline float twice(float v) { return 2.0f * v; }
}
__host__ __device__ int cdiv(int a, int b) { return (a + b - 1) / b; }
torch::Tensor run(torch::Tensor x, double s);
struct Launcher { int threads = 256; };
torch::Tensor run(torch::Tensor x, double s) {
  auto y = torch::empty_like(x);
  const char* brace = "}";
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "run", ([&] {
    scale<scalar_t><<<cdiv(x.numel(), 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), s, x.numel());
  }));
  return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run, "doc"); }
)";

TEST(CudaSourceSplit, DeviceCodeKeepsKernelsAndDropsHostCode) {
  const SplitCudaSource s = splitCudaSource(kSource);
  EXPECT_EQ(lines(s.device), lines(kSource));  // compiler messages point at the candidate's lines
  EXPECT_NE(s.device.find("__global__ void __launch_bounds__(256) scale"), std::string::npos);
  EXPECT_NE(s.device.find("__device__ inline float twice"), std::string::npos);
  EXPECT_NE(s.device.find("int cdiv(int a, int b) { return"), std::string::npos);  // __host__ __device__: both halves
  EXPECT_NE(s.device.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(s.device.find("struct Launcher"), std::string::npos);
  for (const char* gone : {"torch::Tensor", "#include <torch/extension.h>", "#include <vector>", "PYBIND11_MODULE", "AT_DISPATCH", "empty_like"}) {
    EXPECT_EQ(s.device.find(gone), std::string::npos) << gone;
  }
  EXPECT_EQ(s.kernels, std::vector<std::string>{"scale"});
}

TEST(CudaSourceSplit, AnAlignedTypedefStructIsATypeNotAFunction) {
  // A published solution's vector type: the attribute's parentheses once made it look like a host
  // function, which the device half dropped.
  const std::string source =
      "typedef struct __align__(16) {\n  float x, y, z, w;\n} float4_t;\n"
      "struct alignas(8) Pair { float a, b; };\n"
      "__global__ void k(const float4_t* p, float* out) { out[0] = p[0].x; }\n"
      "torch::Tensor run(torch::Tensor x) { return x; }\n";
  const SplitCudaSource s = splitCudaSource(source);
  EXPECT_NE(s.device.find("typedef struct __align__(16) {"), std::string::npos) << s.device;
  EXPECT_NE(s.device.find("} float4_t;"), std::string::npos) << s.device;
  EXPECT_NE(s.device.find("struct alignas(8) Pair"), std::string::npos) << s.device;
  EXPECT_EQ(s.device.find("torch::Tensor run"), std::string::npos) << s.device;
  EXPECT_EQ(s.kernels, std::vector<std::string>{"k"});
}

TEST(CudaSourceSplit, HostCodeKeepsSignaturesAndRecordsLaunches) {
  const SplitCudaSource s = splitCudaSource(kSource);
  EXPECT_EQ(lines(s.host), lines(kSource));
  EXPECT_EQ(s.launches, 1);
  EXPECT_NE(s.host.find("::cuset_kb::Launch<&scale<scalar_t> >(cdiv(x.numel(), 256), 256, 0, at::cuda::getCurrentCUDAStream())("), std::string::npos)
      << s.host;
  EXPECT_EQ(s.host.find("y[i] = x[i] * s"), std::string::npos);  // a device body is not host code
  EXPECT_EQ(s.host.find("2.0f * v"), std::string::npos);
  // A __device__ function is deleted in host code (a call from host code fails to build, as under nvcc);
  // a kernel keeps an empty body, whose address launches take.
  EXPECT_NE(s.host.find("__device__ inline float twice(float v)  = delete;"), std::string::npos) << s.host;
  EXPECT_NE(s.host.find("scale(const scalar_t* x, scalar_t* y, float s, int n) {"), std::string::npos) << s.host;
  EXPECT_NE(s.host.find("return (a + b - 1) / b"), std::string::npos);  // host code may call it
  EXPECT_NE(s.host.find("const char* brace = \"}\""), std::string::npos);
  EXPECT_EQ(s.host.find("<<<"), std::string::npos);
}

TEST(CudaSourceSplit, ADeviceFunctionDeclaredFirstIsDeletedOnceInHostCode) {
  const std::string src =
      "__device__ float half_of(float v);\n__global__ void k(float* y) { y[0] = half_of(y[0]); }\n"
      "__device__ float half_of(float v) { return v / 2; }\ntorch::Tensor run(torch::Tensor x) { return x; }\n";
  const SplitCudaSource s = splitCudaSource(src);
  EXPECT_EQ(s.host.find("half_of(float v);"), std::string::npos) << s.host;  // the prototype is gone from host code
  EXPECT_NE(s.host.find("__device__ float half_of(float v)  = delete;"), std::string::npos) << s.host;
  EXPECT_EQ(lines(s.host), lines(src));
  EXPECT_NE(s.device.find("__device__ float half_of(float v);"), std::string::npos) << s.device;
}

TEST(CudaSourceSplit, HostPrototypesAndExternCBlocksAreHandled) {
  const std::string src =
      "extern \"C\" {\n__global__ void k(float* y) { y[0] = 1; }\nvoid launch(float* y);\n}\n"
      "void launch(float* y) { k<<<1, 1>>>(y); }\nusing namespace torch;\n";
  const SplitCudaSource s = splitCudaSource(src);
  EXPECT_NE(s.device.find("__global__ void k(float* y) { y[0] = 1; }"), std::string::npos);
  EXPECT_EQ(s.device.find("void launch"), std::string::npos);
  EXPECT_EQ(s.device.find("using namespace torch"), std::string::npos);
  EXPECT_NE(s.host.find("::cuset_kb::Launch<&k >(1, 1)(y)"), std::string::npos) << s.host;
}

// A problem y = relu(x) for x [4, 8] (no LibTorch needed to check plans against it).
Problem reluProblem() {
  return parseProblem(
      "name: r\nlevel: 1\nsizes: {small: {M: 4, N: 8}}\ninputs: {x: {dtype: float32, shape: [M, N]}}\noutputs: {y: {dtype: float32, shape: [M, N]}}\n"
      "reference: |\n  def forward(x: Tensor) -> Tensor:\n      return torch.relu(x)\n",
      "r/problem.yaml", "r");
}

json recording(json steps, json output) {
  return {{"buffers",
           {{{"name", "x"}, {"role", "input"}, {"dtype", "float32"}, {"numel", 32}, {"init", "empty"}},
            {{"name", "t1"}, {"role", "scratch"}, {"dtype", "float32"}, {"numel", 32}, {"init", "zeros"}}}},
          {"steps", std::move(steps)},
          {"outputs", {{{"name", "y"}, {"view", std::move(output)}}}}};
}

json view(const std::string& buffer, std::int64_t offset = 0, json sizes = {4, 8}, json strides = {8, 1}) {
  return {{"buffer", buffer}, {"offset", offset}, {"sizes", std::move(sizes)}, {"strides", std::move(strides)}, {"dtype", "float32"}};
}

json kernel(json grid, json args) {
  return {{"kernel", {{"name", "relu_k"}, {"grid", std::move(grid)}, {"block", {32, 1, 1}}, {"shared", 0}, {"args", std::move(args)}}}};
}

TEST(RecordedPlan, AWholeScratchBufferReturnedBecomesTheOutput) {
  const Problem p = reluProblem();
  const auto plan = planFromRecording(
      recording({kernel({1, 1, 1},
                        {{{"buffer", "x"}, {"byte_offset", 0}}, {{"buffer", "t1"}, {"byte_offset", 0}}, {{"bytes", "20000000"}, {"kind", "int"}}})},
                view("t1")),
      p, p.sizeSets[0]);
  ASSERT_TRUE(std::holds_alternative<LaunchPlan>(plan)) << std::get<PlanRefusal>(plan).reason;
  const LaunchPlan& lp = std::get<LaunchPlan>(plan);
  ASSERT_EQ(lp.steps.size(), 1u);  // no copy: the kernel writes the output itself
  EXPECT_EQ(lp.steps[0].kernel.args[1].buffer, "y");
  EXPECT_EQ(lp.steps[0].kernel.args[2].type, "int32");
  EXPECT_TRUE(lp.scratch.empty());
  EXPECT_EQ(lp.zeroedOutputs, std::vector<std::string>{"y"});  // it was torch::zeros
  EXPECT_FALSE(lp.usesLibrary());
}

TEST(RecordedPlan, AnyOtherReturnedViewIsCopiedIntoTheOutputByTheHarness) {
  const Problem p = reluProblem();
  const auto plan = planFromRecording(recording({}, view("x")), p, p.sizeSets[0]);  // `return x`
  ASSERT_TRUE(std::holds_alternative<LaunchPlan>(plan));
  const LaunchPlan& lp = std::get<LaunchPlan>(plan);
  ASSERT_EQ(lp.steps.size(), 1u);
  EXPECT_EQ(lp.steps[0].library.op(), "aten::copy_");
  EXPECT_TRUE(lp.steps[0].library.harness());
  EXPECT_TRUE(lp.libraryOps().empty());  // the harness's copy is not the candidate's library use
}

TEST(RecordedPlan, RefusesWhatNoCorrectRecordingHolds) {
  const Problem p = reluProblem();
  struct Case {
    json recorded;
    Verdict verdict;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {recording({kernel({1, 1, 1}, {{{"buffer", "t1"}, {"byte_offset", 129}}})}, view("t1")), Verdict::runtime_error, "129 bytes into 'y'"},
      {recording({kernel({1, 1, 1}, {{{"buffer", "nowhere"}, {"byte_offset", 0}}})}, view("t1")), Verdict::invalid_submission, "unknown buffer"},
      {recording({kernel({1, 70000, 1}, {})}, view("t1")), Verdict::runtime_error, "invalid configuration argument"},
      {recording({}, view("t1", 8)), Verdict::invalid_submission, "past the end of buffer 't1'"},
      {recording({{{"library", {{"op", "aten::bernoulli"}, {"overload", ""}, {"args", json::array()}}}}}, view("t1")), Verdict::unsupported,
       "random"},
      {recording({{{"library", {{"op", "aten::from_file"}, {"overload", ""}, {"args", json::array()}}}}}, view("t1")), Verdict::unsupported,
       "from_file"},
  };
  for (const auto& c : cases) {
    const auto plan = planFromRecording(c.recorded, p, p.sizeSets[0]);
    ASSERT_TRUE(std::holds_alternative<PlanRefusal>(plan)) << c.recorded.dump();
    EXPECT_EQ(std::get<PlanRefusal>(plan).verdict, c.verdict) << std::get<PlanRefusal>(plan).reason;
    EXPECT_NE(std::get<PlanRefusal>(plan).reason.find(c.needle), std::string::npos) << std::get<PlanRefusal>(plan).reason;
  }
}

TEST(RecordedPlan, MemoryIsCheckedAgainstTheBudgetOfTheDeviceThatRunsIt) {
  const Problem p = reluProblem();
  json huge = recording({}, view("t1"));
  huge["buffers"][1]["numel"] = std::int64_t{1} << 30;  // 4 GiB of intermediates
  // No budget (a GPU: its allocation decides at run time): the plan stands.
  EXPECT_TRUE(std::holds_alternative<LaunchPlan>(planFromRecording(huge, p, p.sizeSets[0])));
  const MemoryBudget simulator{std::int64_t{2} << 30, "device memory the simulator's workers hold", Verdict::unsupported};
  const auto plan = planFromRecording(huge, p, p.sizeSets[0], simulator);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(plan));
  EXPECT_EQ(std::get<PlanRefusal>(plan).verdict, Verdict::unsupported);
  EXPECT_NE(std::get<PlanRefusal>(plan).reason.find("over the 2.15 GB of device memory the simulator's workers hold"), std::string::npos)
      << std::get<PlanRefusal>(plan).reason;
  const MemoryBudget gpu{std::int64_t{1} << 30, "the GPU's free memory", Verdict::runtime_error};
  const auto onGpu = planFromRecording(huge, p, p.sizeSets[0], gpu);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(onGpu));
  EXPECT_EQ(std::get<PlanRefusal>(onGpu).verdict, Verdict::runtime_error);
}

TEST(RecordedPlan, ALibraryStepThatWritesAnInputIsInputMutation) {
  // `return torch.relu_(x)`: on inputs that are all positive the trial's values do not change, so the
  // check after the run cannot see it; the plan says so before anything runs.
  const Problem p = reluProblem();
  const json relu = {{"library", {{"op", "aten::relu_"}, {"overload", ""}, {"args", {{{"tensor", view("x")}}}}, {"outputs", json::array()}}}};
  const auto plan = planFromRecording(recording({relu}, view("x")), p, p.sizeSets[0]);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(plan));
  EXPECT_EQ(std::get<PlanRefusal>(plan).verdict, Verdict::hack_suspected);
  EXPECT_NE(std::get<PlanRefusal>(plan).reason.find("modifies its input 'x' in place (aten::relu_)"), std::string::npos);
  // The same op on a scratch buffer, and an out= into one, are the solution's own business.
  const json onScratch = {{"library", {{"op", "aten::relu_"}, {"overload", ""}, {"args", {{{"tensor", view("t1")}}}}, {"outputs", json::array()}}}};
  EXPECT_TRUE(std::holds_alternative<LaunchPlan>(planFromRecording(recording({onScratch}, view("t1")), p, p.sizeSets[0])));
  const json outInput = {{"library",
                          {{"op", "aten::relu"},
                           {"overload", "out"},
                           {"args", {{{"tensor", view("t1")}}}},
                           {"kwargs", {{"out", {{"tensor", view("x")}}}}},
                           {"outputs", json::array()}}}};
  const auto out = planFromRecording(recording({outInput}, view("t1")), p, p.sizeSets[0]);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(out));
  EXPECT_EQ(std::get<PlanRefusal>(out).verdict, Verdict::hack_suspected);
  // Asked for it, the plan comes back with the verdict it keeps whatever its trials show, so that
  // KernelBench's check (which never looks at inputs) can run it.
  std::optional<PlanRefusal> inputWrite;
  EXPECT_TRUE(std::holds_alternative<LaunchPlan>(planFromRecording(recording({relu}, view("x")), p, p.sizeSets[0], {}, &inputWrite)));
  ASSERT_TRUE(inputWrite);
  EXPECT_EQ(inputWrite->verdict, Verdict::hack_suspected);
  EXPECT_NE(inputWrite->reason.find("modifies its input 'x' in place"), std::string::npos);
}

TEST(RecordedPlan, ARaceTheRecorderFoundIsARuntimeErrorWhateverTheTrialsShow) {
  const Problem p = reluProblem();
  const json onScratch = {{"library", {{"op", "aten::relu_"}, {"overload", ""}, {"args", {{{"tensor", view("t1")}}}}, {"outputs", json::array()}}}};
  json raced = recording({onScratch}, view("t1"));
  raced["race"] = "a race between streams: step 1 (aten::relu_) (stream 1) and ...";
  const auto refused = planFromRecording(raced, p, p.sizeSets[0]);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(refused));
  EXPECT_EQ(std::get<PlanRefusal>(refused).verdict, Verdict::runtime_error);
  std::optional<PlanRefusal> standing;
  EXPECT_TRUE(std::holds_alternative<LaunchPlan>(planFromRecording(raced, p, p.sizeSets[0], {}, &standing)));
  ASSERT_TRUE(standing);
  EXPECT_EQ(standing->verdict, Verdict::runtime_error);
  EXPECT_NE(standing->reason.find("a race between streams"), std::string::npos);
}

// A step as the GPU worker reads one: its JSON, views placed in the region ("byte").
std::string runLibraryCall(const json& call, const LibraryMemory& memory) {
  const auto step = libraryStepFromJson(call);
  if (!step) return step.error();
  return cuset::runLibraryCall(*step, memory);
}

json hostView(std::int64_t byte, json sizes, json strides, const std::string& dtype = "float32") {
  return {{"buffer", "b"}, {"byte", byte}, {"offset", 0}, {"sizes", std::move(sizes)}, {"strides", std::move(strides)}, {"dtype", dtype}};
}

TEST(LibraryCall, RunsAnOpOnViewsOfTheRegionAndCopiesItsResult) {
  std::vector<float> region = {1, -2, 3, -4, 0, 0, 0, 0};
  const json call = {{"op", "aten::relu"}, {"overload", ""}, {"args", {{{"tensor", hostView(0, {4}, {1})}}}}, {"outputs", {hostView(16, {4}, {1})}}};
  ASSERT_EQ(runLibraryCall(call, LibraryMemory{reinterpret_cast<std::byte*>(region.data())}), "");
  EXPECT_EQ(region, (std::vector<float>{1, -2, 3, -4, 1, 0, 3, 0}));
  // In place, with a scalar where the op takes a tensor (x.add_(1)).
  const json add = {{"op", "aten::add_"}, {"overload", "Tensor"}, {"args", {{{"tensor", hostView(0, {2}, {2})}}, 1}}};
  ASSERT_EQ(runLibraryCall(add, LibraryMemory{reinterpret_cast<std::byte*>(region.data())}), "");
  EXPECT_EQ(region[0], 2.0f);
  EXPECT_EQ(region[2], 4.0f);
  EXPECT_EQ(region[1], -2.0f);  // stride 2: untouched
}

TEST(LibraryCall, AnEvalModeBatchNormLeavesItsEmptySavedStatisticsAlone) {
  // Recorded on the meta device, native_batch_norm(training=false) returns saved statistics of [C];
  // on the CPU they are [0]. The output is still computed and the statistics' buffers are left alone.
  std::vector<float> region(4 + 2 + 2 + 4 + 2 + 2, 7.0f);  // x [1,2,2], mean [2], var [2], y [1,2,2], save_mean [2], save_invstd [2]
  for (int i = 0; i < 4; ++i) region[static_cast<std::size_t>(i)] = static_cast<float>(i);
  region[4] = 0, region[5] = 0, region[6] = 1, region[7] = 1;
  const json call = {{"op", "aten::native_batch_norm"},
                     {"overload", ""},
                     {"args",
                      {{{"tensor", hostView(0, {1, 2, 2}, {4, 2, 1})}},
                       nullptr,
                       nullptr,
                       {{"tensor", hostView(16, {2}, {1})}},
                       {{"tensor", hostView(24, {2}, {1})}},
                       false,
                       0.1,
                       0.0}},
                     {"outputs", {hostView(32, {1, 2, 2}, {4, 2, 1}), hostView(48, {2}, {1}), hostView(56, {2}, {1})}}};
  ASSERT_EQ(runLibraryCall(call, LibraryMemory{reinterpret_cast<std::byte*>(region.data())}), "");
  EXPECT_EQ(std::vector<float>(region.begin() + 8, region.begin() + 12), (std::vector<float>{0, 1, 2, 3}));  // (x - 0) / sqrt(1)
  EXPECT_EQ(region[12], 7.0f);  // the empty saved statistics wrote nothing
}

TEST(LibraryCall, AnOpThatRejectsItsArgumentsSaysWhy) {
  std::vector<float> region(8);
  const json call = {{"op", "aten::mm"},
                     {"overload", ""},
                     {"args", {{{"tensor", hostView(0, {2, 3}, {3, 1})}}, {{"tensor", hostView(0, {2, 2}, {2, 1})}}}},
                     {"outputs", {hostView(0, {2, 2}, {2, 1})}}};
  const std::string why = runLibraryCall(call, LibraryMemory{reinterpret_cast<std::byte*>(region.data())});
  EXPECT_NE(why.find("shapes cannot be multiplied"), std::string::npos) << why;
  EXPECT_NE(runLibraryCall(json{{"op", "aten::no_such_op"}, {"args", json::array()}}, LibraryMemory{}).find("no op"), std::string::npos);
}

TEST(LibraryCall, RefusesRandomFileAndHostReadOps) {
  EXPECT_EQ(libraryOpRefusal("aten::convolution", ""), "");
  EXPECT_EQ(libraryOpRefusal("aten::gelu", ""), "");  // approximate="none": a string it may take
  EXPECT_NE(libraryOpRefusal("aten::normal_", ""), "");
  EXPECT_NE(libraryOpRefusal("aten::from_file", ""), "");
  EXPECT_NE(libraryOpRefusal("aten::_local_scalar_dense", ""), "");
  EXPECT_NE(libraryOpRefusal("prims::add", ""), "");
}

TEST(LibraryCall, AnOpOutsideTheClosedSetIsUnsupportedByName) {
  // as_strided exists, takes no generator and no string, and would let a step view memory outside its
  // view: the closed set leaves it out.
  EXPECT_NE(libraryOpRefusal("aten::as_strided", "").find("aten::as_strided is not one of the ops a library step may be"), std::string::npos)
      << libraryOpRefusal("aten::as_strided", "");
  const Problem p = reluProblem();
  const json step = {
      {"library", {{"op", "aten::as_strided"}, {"overload", ""}, {"args", {{{"tensor", view("x")}}, {64}, {1}}}, {"outputs", {view("t1")}}}}};
  const auto plan = planFromRecording(recording({step}, view("t1")), p, p.sizeSets[0]);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(plan));
  EXPECT_EQ(std::get<PlanRefusal>(plan).verdict, Verdict::unsupported);
  EXPECT_NE(std::get<PlanRefusal>(plan).reason.find("aten::as_strided"), std::string::npos) << std::get<PlanRefusal>(plan).reason;
  // A step the recording does not describe properly is malformed, whatever its op.
  const json broken = {{"library", {{"op", "aten::relu"}, {"args", {{{"tensor", {{"buffer", "x"}}}}}}}}};
  const auto malformed = planFromRecording(recording({broken}, view("t1")), p, p.sizeSets[0]);
  ASSERT_TRUE(std::holds_alternative<PlanRefusal>(malformed));
  EXPECT_EQ(std::get<PlanRefusal>(malformed).verdict, Verdict::invalid_submission);
  EXPECT_NE(std::get<PlanRefusal>(malformed).reason.find("no integer \"offset\""), std::string::npos) << std::get<PlanRefusal>(malformed).reason;
}

bool pythonHasTorch() { return runSubprocess({pythonWithTorch(), "-c", "import torch"}, std::chrono::seconds(60)).ok(); }

const char* kSolution = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
src = """
#include <torch/extension.h>
__global__ void relu_k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_k<<<(x.numel() + 31) / 32, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
m = load_inline(name="r", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=src, functions=["relu_cuda"])
class ModelNew(nn.Module):
    def forward(self, x):
        return m.relu_cuda(x) + 0 * x.mean()
)";

TEST(KernelBenchTranslator, RecordsKernelsAndLibraryStepsAndCachesTheResult) {
  if (!pythonHasTorch()) GTEST_SKIP() << "no Python with torch";
  test::TempDir dir;
  const Problem p = reluProblem();
  const KernelBenchTranslator translator(TranslatorOptions{.cacheDir = dir / "cache"});
  const Translation t = translator.translate(p, kSolution);
  ASSERT_TRUE(t.ok()) << describeTranslation(t) << "\n" << t.log;
  EXPECT_FALSE(t.cacheHit);
  EXPECT_EQ(t.plan.kernelNames, std::vector<std::string>{"relu_k"});
  const LaunchPlan& plan = t.plan.plans.at("small");
  ASSERT_GE(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].kind, PlanStep::Kind::kernel);
  EXPECT_EQ(plan.steps[0].kernel.grid[0], 1u);  // ceil(32 / 32)
  const auto ops = t.plan.libraryOps();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "aten::mean"), ops.end());
  EXPECT_EQ(t.plan.deviceSource.find("torch::Tensor"), std::string::npos);

  const Translation again = translator.translate(p, kSolution);
  EXPECT_TRUE(again.cacheHit);
  EXPECT_EQ(again.plan.plans.at("small").steps.size(), plan.steps.size());
}

const char* kTritonDot = R"(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, A, B):
        C = torch.empty((A.shape[0], B.shape[1]), device=A.device, dtype=A.dtype)
        mm[(triton.cdiv(A.shape[0], 64), triton.cdiv(B.shape[1], 64))](A, B, C, A.shape[0], B.shape[1], A.shape[1], BM=64, BN=64, BK=16)
        return C
)";

// The cuda backend's Triton plan: Triton's own code for the GPU's architecture (Hopper's wgmma, which
// only sm_90a assembles), with that compile's shared memory and thread bound; the simulator's is sm_80.
TEST(KernelBenchTranslator, ATritonKernelForAGpuIsCompiledAsTritonCompilesItThere) {
  if (!runSubprocess({pythonWithTorch(), "-c", "import triton"}, std::chrono::seconds(60)).ok()) GTEST_SKIP() << "no Python with Triton";
  const Problem p = parseProblem(
      "name: mm\nlevel: 1\nsizes: {small: {M: 64, N: 64, K: 32}}\ninputs: {A: {dtype: float32, shape: [M, K]}, B: {dtype: float32, shape: [K, N]}}\n"
      "outputs: {C: {dtype: float32, shape: [M, N]}}\nreference: |\n  def forward(A: Tensor, B: Tensor) -> Tensor:\n      return A @ B\n",
      "mm/problem.yaml", "mm");
  const Translation sim = KernelBenchTranslator(TranslatorOptions{}).translate(p, kTritonDot);
  const Translation gpu = KernelBenchTranslator(TranslatorOptions{.tritonCapability = 90}).translate(p, kTritonDot);
  ASSERT_TRUE(sim.ok()) << describeTranslation(sim) << "\n" << sim.log;
  ASSERT_TRUE(gpu.ok()) << describeTranslation(gpu) << "\n" << gpu.log;
  EXPECT_EQ(sim.plan.deviceArch, "");
  EXPECT_NE(sim.plan.deviceSource.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
  EXPECT_EQ(gpu.plan.deviceArch, "sm_90a");
  EXPECT_NE(gpu.plan.deviceSource.find("wgmma.mma_async.sync.aligned"), std::string::npos);
  EXPECT_NE(gpu.plan.deviceSource.find("__launch_bounds__(128)"), std::string::npos);
  EXPECT_EQ(gpu.plan.deviceSource.find("CUSET_SIM_KERNEL_LIBRARY"), std::string::npos);  // no simulator runs it
  const KernelStep& simStep = sim.plan.plans.at("small").kernelSteps().at(0);
  const KernelStep& gpuStep = gpu.plan.plans.at("small").kernelSteps().at(0);
  EXPECT_EQ(gpuStep.block, simStep.block);
  EXPECT_EQ(gpuStep.grid, simStep.grid);
  EXPECT_GT(gpuStep.sharedBytes, 0u);  // Triton's own figure for this compile: wgmma reads its operands from shared memory

  // NVRTC assembles the Hopper code for sm_90a only, and the cubin needs what Triton said it would.
  const CompileOutput specific = NvrtcCompiler(CompileOptions{.arch = "sm_90a"}, {}).compile(gpu.plan.deviceSource, gpu.plan.kernelNames);
  ASSERT_EQ(specific.status, CompileOutput::Status::ok) << specific.log;
  EXPECT_TRUE(specific.isCubin);
  EXPECT_EQ(specific.resources.at(gpu.plan.kernelNames.at(0)).maxThreads, 128u);  // Triton's .reqntid, kept
  // The asm statement declares Triton's registers; NVRTC passes the parameters in registers of the
  // enclosing function. Names shared between the two would shadow the parameters: the kernel would read
  // uninitialised registers on a GPU.
  const CompileOutput ptx = NvrtcCompiler(CompileOptions{.arch = "compute_90a"}, {}).compile(gpu.plan.deviceSource, gpu.plan.kernelNames);
  ASSERT_EQ(ptx.status, CompileOutput::Status::ok) << ptx.log;
  const std::string text(reinterpret_cast<const char*>(ptx.image.data()), ptx.image.size());
  const std::size_t asmStart = text.find("// begin inline asm");
  ASSERT_NE(asmStart, std::string::npos);
  const auto declared = [&](std::size_t from, std::size_t to) {
    std::set<std::string> names;
    static const std::regex kReg(R"(\.reg\s+\.\w+\s+%(\w+)<)");
    for (std::sregex_iterator it(text.begin() + from, text.begin() + to, kReg), end; it != end; ++it) names.insert((*it)[1]);
    return names;
  };
  const std::set<std::string> outer = declared(0, asmStart), inner = declared(asmStart, text.size());
  EXPECT_FALSE(outer.empty());
  EXPECT_FALSE(inner.empty());
  for (const std::string& name : inner) EXPECT_FALSE(outer.contains(name)) << "%" << name << " shadows the compiler's own registers";
  const CompileOutput plain = NvrtcCompiler(CompileOptions{.arch = "sm_90"}, {}).compile(gpu.plan.deviceSource, gpu.plan.kernelNames);
  EXPECT_EQ(plain.status, CompileOutput::Status::compileError);
  EXPECT_NE(plain.log.find("wgmma"), std::string::npos) << plain.log;
}

// triton.autotune: the simulator runs the first configuration; for a GPU the launch also carries every
// kept configuration's own launch (grid after its meta, its warps), for the GPU worker to time.
TEST(KernelBenchTranslator, AnAutotunedTritonLaunchCarriesEveryConfigurationForTheGpuToTime) {
  if (!runSubprocess({pythonWithTorch(), "-c", "import triton"}, std::chrono::seconds(60)).ok()) GTEST_SKIP() << "no Python with Triton";
  const Problem p = parseProblem(
      "name: r\nlevel: 1\nsizes: {small: {N: 4096}}\ninputs: {x: {dtype: float32, shape: [N]}}\noutputs: {y: {dtype: float32, shape: [N]}}\n"
      "reference: |\n  def forward(x: Tensor) -> Tensor:\n      return torch.relu(x)\n",
      "r/problem.yaml", "r");
  const std::string autotuned =
      readFile(std::filesystem::path(CUSET_SOURCE_DIR) / "tests/data/kernelbench_modelnew/level1/kb1_rectifier/triton_autotuned.py");
  const Translation sim = KernelBenchTranslator(TranslatorOptions{}).translate(p, autotuned);
  const Translation gpu = KernelBenchTranslator(TranslatorOptions{.tritonCapability = 90}).translate(p, autotuned);
  ASSERT_TRUE(sim.ok()) << describeTranslation(sim) << "\n" << sim.log;
  ASSERT_TRUE(gpu.ok()) << describeTranslation(gpu) << "\n" << gpu.log;
  EXPECT_FALSE(sim.plan.plans.at("small").autotuned());
  EXPECT_NE(sim.log.find("autotune relu_kernel: BLOCK: 256, num_warps: 2"), std::string::npos) << sim.log;
  EXPECT_EQ(sim.plan.kernelNames.size(), 1u);

  const LaunchPlan& plan = gpu.plan.plans.at("small");
  ASSERT_TRUE(plan.autotuned());
  const KernelStep step = plan.kernelSteps().at(0);
  ASSERT_TRUE(step.autotune);
  EXPECT_EQ(step.autotune->key, "relu_kernel(4096, torch.float32, torch.float32)");
  ASSERT_EQ(step.autotune->alternatives.size(), 2u);
  EXPECT_EQ(step.autotune->configs[1].rfind("BLOCK: 1024, num_warps: 4", 0), 0u) << step.autotune->configs[1];
  const KernelStep& first = step.autotune->alternatives[0];
  const KernelStep& second = step.autotune->alternatives[1];
  EXPECT_EQ(first.kernel, step.kernel);  // the step is the first configuration, as on the CPU
  EXPECT_EQ(first.grid[0], 16u);
  EXPECT_EQ(first.block[0], 64u);
  EXPECT_EQ(second.grid[0], 4u);
  EXPECT_EQ(second.block[0], 128u);
  EXPECT_NE(second.kernel, first.kernel);
  EXPECT_EQ(second.args.size(), first.args.size());
  EXPECT_EQ(second.args[0].buffer, "x");
  EXPECT_EQ(gpu.plan.kernelNames, (std::vector<std::string>{first.kernel, second.kernel}));
  EXPECT_NE(describeTranslation(gpu).find("autotuned on the GPU, configuration 2: BLOCK: 1024"), std::string::npos) << describeTranslation(gpu);
  EXPECT_EQ(plan.tuned({{step.autotune->key, 1}}).kernelSteps().at(0).kernel, second.kernel);
  // Both configurations are in the module the GPU loads.
  EXPECT_EQ(gpu.plan.deviceArch, "sm_90a");
  const CompileOutput compiled = NvrtcCompiler(CompileOptions{.arch = "sm_90a"}, {}).compile(gpu.plan.deviceSource, gpu.plan.kernelNames);
  ASSERT_EQ(compiled.status, CompileOutput::Status::ok) << compiled.log;
  EXPECT_EQ(compiled.resources.at(second.kernel).maxThreads, 128u);
}

// A configuration ptxas refuses is one Triton's timing skips (PTXASError): left out of the launch, its
// code out of the module; the first it leaves becomes the step, and one left is no longer autotuned.
TEST(KernelBenchTranslator, AnAutotunedConfigurationPtxasRefusesIsLeftOut) {
  const json triton = {{"kernels",
                        {{{"name", "bad"}, {"code", "extern \"C\" __global__ void bad(float* p) { asm volatile(\"not.an.instruction;\"); }\n"}},
                         {{"name", "good"}, {"code", "extern \"C\" __global__ void good(float* p) { p[0] = 1.0f; }\n"}}}}};
  const json args = json::array({{{"buffer", "x"}, {"byte_offset", 0}}});
  json plans = {{"small",
                 {{"steps",
                   {{{"kernel",
                      {{"name", "bad"},
                       {"grid", {4, 1, 1}},
                       {"block", {64, 1, 1}},
                       {"shared", 0},
                       {"args", args},
                       {"autotune",
                        {{"key", "k(4096)"},
                         {"configs", {"BLOCK: 64", "BLOCK: 256"}},
                         {"alternatives",
                          {{{"name", "bad"}, {"grid", {4, 1, 1}}, {"block", {64, 1, 1}}, {"shared", 0}},
                           {{"name", "good"}, {"grid", {1, 1, 1}}, {"block", {256, 1, 1}}, {"shared", 0}}}}}}}}}}}}}};
  std::string log;
  const std::string source = assembledTritonConfigurations(triton, plans, "sm_90", log);
  EXPECT_EQ(source, triton["kernels"][1]["code"].get<std::string>());  // the refused kernel's code is gone
  const json& kernel = plans["small"]["steps"][0]["kernel"];
  EXPECT_EQ(kernel["name"], "good");
  EXPECT_EQ(kernel["grid"], json({1, 1, 1}));
  EXPECT_EQ(kernel["block"], json({256, 1, 1}));
  EXPECT_EQ(kernel["args"], args);
  EXPECT_FALSE(kernel.contains("autotune"));
  EXPECT_NE(log.find("autotune k(4096): BLOCK: 64 is not timed on the GPU: ptxas refuses it"), std::string::npos) << log;

  // Nothing refused: the launches as they were, and only the launched kernels' code (a configuration the
  // recorder left out, for its shared memory, is compiled and never launched).
  json kept = plans;
  std::string quiet;
  kept["small"]["steps"][0]["kernel"]["autotune"] = {
      {"key", "k"}, {"configs", {"a", "b"}}, {"alternatives", {{{"name", "good"}}, {{"name", "good"}}}}};
  const json unlaunched = {{"kernels", {triton["kernels"][1], {{"name", "big"}, {"code", "// never launched\n"}}}}};
  EXPECT_EQ(assembledTritonConfigurations(unlaunched, kept, "sm_90", quiet), triton["kernels"][1]["code"].get<std::string>());
  EXPECT_TRUE(kept["small"]["steps"][0]["kernel"].contains("autotune"));
  EXPECT_EQ(quiet, "");
}

TEST(KernelBenchTranslator, RecordsOnlyTheSizeSetsTheRunJudges) {
  if (!pythonHasTorch()) GTEST_SKIP() << "no Python with torch";
  const Problem p = parseProblem(
      "name: r\nlevel: 1\nsizes: {small: {M: 4, N: 8}, full: {M: 64, N: 8}}\ninputs: {x: {dtype: float32, shape: [M, N]}}\n"
      "outputs: {y: {dtype: float32, shape: [M, N]}}\nreference: |\n  def forward(x: Tensor) -> Tensor:\n      return torch.relu(x)\n",
      "r/problem.yaml", "r");
  const Translation all = KernelBenchTranslator(TranslatorOptions{}).translate(p, kSolution);
  ASSERT_TRUE(all.ok()) << all.reason;
  EXPECT_EQ(all.plan.plans.size(), 2u);
  const Translation small = KernelBenchTranslator(TranslatorOptions{.sizeSets = {"small"}}).translate(p, kSolution);
  ASSERT_TRUE(small.ok()) << small.reason;
  EXPECT_EQ(small.plan.plans.size(), 1u);
  EXPECT_TRUE(small.plan.plans.contains("small"));
  EXPECT_FALSE(small.recorded.contains("full"));  // never recorded, so never checked at sizes that do not run
}

TEST(KernelBenchTranslator, AStreamIsUnsupportedAndASocketIsAViolation) {
  if (!pythonHasTorch()) GTEST_SKIP() << "no Python with torch";
  const Problem p = reluProblem();
  const KernelBenchTranslator translator(TranslatorOptions{});
  std::string stream = kSolution;
  stream.replace(stream.find("auto y ="), 0, "cudaStream_t s; cudaStreamCreate(&s);\n    ");
  const Translation a = translator.translate(p, stream);
  EXPECT_EQ(a.verdict, Verdict::unsupported);
  EXPECT_NE(a.reason.find("cudaStreamCreate"), std::string::npos) << a.reason;
  // A CUDA call the stand-in does not define never reaches the real runtime (which the recorder's torch
  // holds): it is refused at link time, named.
  std::string graph = kSolution;
  graph.replace(graph.find("auto y ="), 0, "cudaGraphLaunch(nullptr, nullptr);\n    ");
  const Translation g = translator.translate(p, graph);
  EXPECT_EQ(g.verdict, Verdict::unsupported);
  EXPECT_NE(g.reason.find("host code calls cudaGraphLaunch"), std::string::npos) << g.reason;
  const Translation b = translator.translate(p, std::string("import socket\nsocket.socket()\n") + kSolution);
  EXPECT_EQ(b.verdict, Verdict::sandbox_violation);
  EXPECT_NE(b.reason.find("socket"), std::string::npos) << b.reason;
}

// The warm recorder (a fork per request of one Python with torch imported) and a process per run must
// give a solution the same sandbox: its scratch folder writable, everything else not, and nothing of
// one solution left for the next.
TEST(KernelBenchTranslator, WarmAndColdRecordersGiveTheSameSandbox) {
  if (!pythonHasTorch()) GTEST_SKIP() << "no Python with torch";
  const Problem p = reluProblem();
  const std::string scratchWrites =
      "import os, tempfile\nos.makedirs('build/ext', exist_ok=True)\nd = tempfile.mkdtemp()\n"
      "open(os.path.join(d, 'k.cu'), 'w').write('x')\nos.remove(os.path.join(d, 'k.cu'))\n";
  const std::string poisons = "import torch\ntorch.Tensor.mean = lambda *a, **k: 1 / 0\n";
  for (const bool warm : {true, false}) {
    SCOPED_TRACE(warm ? "warm" : "cold");
    const KernelBenchTranslator translator(TranslatorOptions{.warm = warm});
    const Translation scratch = translator.translate(p, scratchWrites + kSolution);
    EXPECT_TRUE(scratch.ok()) << describeTranslation(scratch) << "\n" << scratch.log;
    EXPECT_EQ(scratch.warmRuns, warm ? 2 : 0);  // capture and record, both served warm (or neither)
    const Translation outside = translator.translate(p, std::string("open('/tmp/cuset_planted_by_test', 'w').write('x')\n") + kSolution);
    EXPECT_EQ(outside.verdict, Verdict::sandbox_violation) << outside.reason;
    EXPECT_FALSE(std::filesystem::exists("/tmp/cuset_planted_by_test"));
    const Translation escape = translator.translate(p, std::string("import os\nos.makedirs('../../escaped', exist_ok=True)\n") + kSolution);
    EXPECT_EQ(escape.verdict, Verdict::sandbox_violation) << escape.reason;
    const Translation reads = translator.translate(p, std::string("open('/etc/hostname').read()\n") + kSolution);
    EXPECT_EQ(reads.verdict, Verdict::sandbox_violation) << reads.reason;
    const Translation forks = translator.translate(p, std::string("import os\nos.fork()\n") + kSolution);
    EXPECT_EQ(forks.verdict, Verdict::sandbox_violation) << forks.reason;
    // A solution that breaks torch for whoever runs next breaks only itself.
    const Translation poisoned = translator.translate(p, poisons + kSolution);
    EXPECT_FALSE(poisoned.ok());
    const Translation after = translator.translate(p, kSolution);
    EXPECT_TRUE(after.ok()) << describeTranslation(after);
  }
}

// A function bound by functions=[...] but declared only in cuda_sources fails load_inline's own build
// (cpp_sources is its own translation unit): compile_error, and the reason says load_inline fails too.
TEST(KernelBenchTranslator, AFunctionDeclaredNowhereFailsAsLoadInlineWould) {
  if (!pythonHasTorch()) GTEST_SKIP() << "no Python with torch";
  std::string undeclared = kSolution;
  undeclared.replace(undeclared.find("cpp_sources=\"torch::Tensor relu_cuda(torch::Tensor x);\""), 55, "cpp_sources=\"\"");
  const Translation t = KernelBenchTranslator(TranslatorOptions{}).translate(reluProblem(), undeclared);
  EXPECT_EQ(t.verdict, Verdict::compile_error) << t.reason;
  EXPECT_NE(t.reason.find("'relu_cuda' is only in cuda_sources, which load_inline compiles apart"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("load_inline fails there too"), std::string::npos) << t.reason;
}

}  // namespace
}  // namespace cuset
