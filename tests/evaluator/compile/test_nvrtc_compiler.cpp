#include <gtest/gtest.h>

#include <filesystem>

#include "cuset/evaluator/candidate/source_policy.hpp"
#include "cuset/evaluator/compile/cubin_symbols.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

const std::string kKernel = R"(
#include <cstdint>
#include <cmath>
#include <cfloat>
extern "C" __global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int64_t wide = i;
  if (i < n) y[i] = x[i] * 2.0f + (wide > INT32_MAX ? INFINITY : 0.0f) + (FLT_MAX < 0 ? NAN : 0.0f);
}
__device__ float helper(float v) { return v; }
template <int B> __global__ void tiled(float* y) { y[threadIdx.x] = helper((float)B); }
template __global__ void tiled<16>(float*);
__global__ void half_kernel(__half* h, __nv_bfloat16* b) { h[0] = __float2half(1.0f); b[0] = __float2bfloat16(2.0f); }
)";

NvrtcCompiler uncached(const std::string& arch = "sm_90") { return NvrtcCompiler(CompileOptions{.arch = arch}, {}); }

TEST(NvrtcCompiler, CompilesWithThePreludeAndFindsKernels) {
  const CompileOutput out = uncached().compile(kKernel, {"scale", "tiled<16>", "half_kernel"});
  ASSERT_EQ(out.status, CompileOutput::Status::ok) << out.log;
  EXPECT_TRUE(out.isCubin);
  EXPECT_FALSE(out.image.empty());
  EXPECT_EQ(out.loweredNames.at("scale"), "scale");
  EXPECT_EQ(out.loweredNames.at("tiled<16>"), "_Z5tiledILi16EEvPf");
  auto entries = cubinKernelNames(out.image);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->size(), 3u);
  EXPECT_FALSE(out.cacheHit);
}

// Every header the include policy allows compiles under NVRTC with the harness's options (CUDA 13
// moved libcu++ and CUB under include/cccl, which cooperative_groups.h needs), and so do examples
// of the allowed families.
TEST(NvrtcCompiler, EveryHeaderTheIncludePolicyAllowsCompiles) {
  std::vector<std::string> headers(allowedHeaderNames().begin(), allowedHeaderNames().end());
  for (const char* family : {"cuda/std/array", "cuda/std/cmath", "cuda/std/utility", "cub/block/block_reduce.cuh", "cub/block/block_load.cuh",
                             "cub/warp/warp_reduce.cuh"}) {
    headers.emplace_back(family);
  }
  // One source with all of them (one compile: CUB alone takes seconds); the log names a failing one.
  std::string source;
  for (const auto& header : headers) {
    const std::string line = "#include <" + header + ">\n";
    ASSERT_EQ(disallowedInclude(line), std::nullopt) << header;
    source += line;
  }
  source +=
      "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = std::numeric_limits<float>::max() + (std::is_same<int, int>::value ? 1 : 0); }\n";
  const CompileOutput out = uncached().compile(source, {"k"});
  EXPECT_EQ(out.status, CompileOutput::Status::ok) << out.log;
}

TEST(NvrtcCompiler, ReportsStaticSharedMemoryPerKernel) {
  const CompileOutput out = uncached().compile(
      "extern \"C\" __global__ void k(float* y) { __shared__ float tile[1024]; tile[threadIdx.x] = 1; __syncthreads(); y[0] = tile[5]; }\n"
      "extern \"C\" __global__ void none(float* y) { y[0] = 1; }\n",
      {"k", "none"});
  ASSERT_EQ(out.status, CompileOutput::Status::ok) << out.log;
  // The cubin's section includes the 1 KiB sm_80+ reserves per block.
  EXPECT_GE(out.resources.at("k").staticSharedBytes, 4096u);
  EXPECT_LE(out.resources.at("k").staticSharedBytes, 4096u + 1024u);
  EXPECT_EQ(out.resources.at("none").staticSharedBytes, 0u);
}

// What the driver checks at launch comes from the cubin: __launch_bounds__, registers, local memory.
TEST(NvrtcCompiler, ReadsLaunchResourcesFromTheCubin) {
  const std::string source =
      "extern \"C\" __global__ void __launch_bounds__(128) bounded(float* y) { y[threadIdx.x] = 1; }\n"
      "extern \"C\" __global__ void plain(float* y) { y[threadIdx.x] = 2; }\n"
      // Dynamic indexing into a local array puts it in local memory (a stack frame).
      "extern \"C\" __global__ void framed(float* y, int n) { float a[256]; for (int i = 0; i < 256; ++i) a[i] = y[i * n]; y[0] = a[n & 255]; }\n"
      "extern \"C\" __global__ void __maxnreg__(32) capped(float* y) { y[threadIdx.x] = 3; }\n";
  const std::filesystem::path cache = testing::TempDir() + "/cuset-resources-cache";
  std::filesystem::remove_all(cache);
  for (int pass = 0; pass < 2; ++pass) {  // compiled, then from the cache
    const CompileOutput out = NvrtcCompiler(CompileOptions{.arch = "sm_90"}, cache).compile(source, {"bounded", "plain", "framed", "capped"});
    ASSERT_EQ(out.status, CompileOutput::Status::ok) << out.log;
    EXPECT_EQ(out.cacheHit, pass == 1);
    EXPECT_EQ(out.resources.at("bounded").maxThreads, 128u);
    EXPECT_EQ(out.resources.at("plain").maxThreads, 0u);
    EXPECT_GT(out.resources.at("plain").registers, 0u);
    EXPECT_LE(out.resources.at("capped").registers, 32u);
    EXPECT_GE(out.resources.at("framed").localBytes, 1024u);
    EXPECT_EQ(out.resources.at("plain").localBytes, 0u);
  }
}

TEST(CubinKernelResources, ATruncatedImageIsAnErrorNotACrash) {
  const CompileOutput out = uncached().compile("extern \"C\" __global__ void k(float* y) { y[0] = 1; }\n", {"k"});
  ASSERT_EQ(out.status, CompileOutput::Status::ok) << out.log;
  ASSERT_TRUE(cubinKernelResources(out.image).ok());
  for (std::size_t cut : {std::size_t{10}, out.image.size() / 2}) EXPECT_FALSE(cubinKernelResources(std::span(out.image.data(), cut)).ok()) << cut;
  for (std::size_t cut = 0; cut < out.image.size(); cut += 7) (void)cubinKernelResources(std::span(out.image.data(), cut));  // never a crash
}

TEST(NvrtcCompiler, CompileErrorKeepsTheLogWithCandidateLineNumbers) {
  const CompileOutput out = uncached().compile("extern \"C\" __global__ void k(float* y) {\n  y[0] = undefined_name;\n}\n", {"k"});
  EXPECT_EQ(out.status, CompileOutput::Status::compileError);
  EXPECT_NE(out.log.find("candidate.cu(2)"), std::string::npos) << out.log;  // the prelude shifts no lines
  EXPECT_NE(out.log.find("undefined_name"), std::string::npos);
  EXPECT_EQ(out.log.find("__nv_name_map"), std::string::npos);
}

TEST(NvrtcCompiler, MissingKernelIsToldApartFromACompileError) {
  const CompileOutput missing = uncached().compile(kKernel, {"scale", "nope"});
  EXPECT_EQ(missing.status, CompileOutput::Status::missingKernels);
  EXPECT_EQ(missing.missingKernels, std::vector<std::string>{"nope"});
  const CompileOutput broken = uncached().compile(kKernel + "\nsyntax error here", {"nope"});
  EXPECT_EQ(broken.status, CompileOutput::Status::compileError);
}

TEST(NvrtcCompiler, ADeviceFunctionIsNotAKernel) {
  const CompileOutput out = uncached().compile(kKernel, {"helper"});
  EXPECT_EQ(out.status, CompileOutput::Status::missingKernels);
  EXPECT_EQ(out.missingKernels, std::vector<std::string>{"helper"});
}

TEST(NvrtcCompiler, PtxTargetForComputeArch) {
  const CompileOutput out = uncached("compute_90").compile(kKernel, {"scale"});
  ASSERT_EQ(out.status, CompileOutput::Status::ok) << out.log;
  EXPECT_FALSE(out.isCubin);
  EXPECT_EQ(ptxKernelNames(std::string(reinterpret_cast<const char*>(out.image.data()), out.image.size())).size(), 3u);
}

TEST(NvrtcCompiler, RejectsUnknownArchitectures) {
  CUSET_EXPECT_THROW_WITH(uncached("sm_10"), "sm_10", "does not support", "sm_90");
  CUSET_EXPECT_THROW_WITH(uncached("volta"), "not a CUDA architecture");
}

TEST(NvrtcCompiler, CacheHitsReturnTheSameModuleAndSurviveCorruption) {
  test::TempDir dir;
  const NvrtcCompiler compiler(CompileOptions{}, dir.path());
  const CompileOutput first = compiler.compile(kKernel, {"scale"});
  const CompileOutput second = compiler.compile(kKernel, {"scale"});
  EXPECT_FALSE(first.cacheHit);
  EXPECT_TRUE(second.cacheHit);
  EXPECT_EQ(first.image, second.image);
  EXPECT_EQ(second.loweredNames, first.loweredNames);
  // Another kernel list or another source is another entry.
  EXPECT_FALSE(compiler.compile(kKernel, {"scale", "half_kernel"}).cacheHit);
  EXPECT_FALSE(compiler.compile(kKernel + "\n", {"scale"}).cacheHit);
  // Compile errors are cached too, with their log.
  const std::string bad = "__global__ void k() { oops }";
  EXPECT_FALSE(compiler.compile(bad, {"k"}).cacheHit);
  const CompileOutput badAgain = compiler.compile(bad, {"k"});
  EXPECT_TRUE(badAgain.cacheHit);
  EXPECT_EQ(badAgain.status, CompileOutput::Status::compileError);
  EXPECT_NE(badAgain.log.find("oops"), std::string::npos);
  // A corrupted image is detected and recompiled, not returned.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (entry.path().extension() == ".bin") test::writeText(entry.path(), "garbage");
  }
  const CompileOutput recovered = compiler.compile(kKernel, {"scale"});
  EXPECT_FALSE(recovered.cacheHit);
  EXPECT_EQ(recovered.image, first.image);
}

TEST(CubinSymbols, RejectsTruncatedAndForeignImages) {
  const CompileOutput out = uncached().compile(kKernel, {"scale"});
  ASSERT_EQ(out.status, CompileOutput::Status::ok);
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, std::size_t{64}, out.image.size() / 2}) {
    auto names = cubinKernelNames(std::span(out.image.data(), cut));
    EXPECT_FALSE(names.ok() && names->size() == 3u) << "cut at " << cut;
  }
  const std::string text = "not an elf file at all";
  EXPECT_FALSE(cubinKernelNames(std::as_bytes(std::span(text.data(), text.size()))).ok());
}

}  // namespace
}  // namespace cuset
