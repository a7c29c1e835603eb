// The cuda backend without a GPU (here and in CI): the driver loader's errors; with a GPU: a real
// kernel judged and timed. Device tests skip with the reason when no GPU can be used.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cuset/evaluator/cuda/cuda_backend.hpp"
#include "cuset/evaluator/cuda/cuda_driver.hpp"
#include "cuset/evaluator/cuda/nvml_clock_monitor.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"
#include "triton_benchmark.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

TEST(CudaDriver, LoadsOrSaysWhatIsMissing) {
  auto driver = CudaDriver::get();
  if (driver) {
    EXPECT_GE((*driver)->version(), kCudaDriverApiVersion);
    EXPECT_EQ((*driver)->describe(CUDA_ERROR_ILLEGAL_ADDRESS).rfind("CUDA_ERROR_ILLEGAL_ADDRESS", 0), 0u);
    return;
  }
  // One line that names the library and what to do about it.
  const std::string& why = driver.error();
  EXPECT_NE(why.find("libcuda"), std::string::npos) << why;
  EXPECT_TRUE(why.find("NVIDIA driver") != std::string::npos || why.find("--backend sim") != std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(CudaDriver::get().error(), why);  // remembered, not retried
}

TEST(CudaDriver, StickyErrorsEndTheWorker) {
  EXPECT_TRUE(CudaDriver::isSticky(CUDA_ERROR_ILLEGAL_ADDRESS));
  EXPECT_TRUE(CudaDriver::isSticky(CUDA_ERROR_LAUNCH_FAILED));
  EXPECT_FALSE(CudaDriver::isSticky(CUDA_ERROR_INVALID_VALUE));
  EXPECT_FALSE(CudaDriver::isSticky(CUDA_ERROR_OUT_OF_MEMORY));
}

// A worker on a driver of its own ($CUSET_LIBCUDA: the fake) never hands its memory to LibTorch's CUDA,
// which runs on the process's libcuda.so.1 (issue #62: host-memory "device" pointers on a GPU machine).
TEST(CudaDriver, LibTorchSharesOnlyTheProcesssOwnDriver) {
  ::setenv("CUSET_LIBCUDA", "/opt/some/other/libcuda.so", 1);
  EXPECT_FALSE(CudaDriver::sharedWithLibTorch());
  ::setenv("CUSET_LIBCUDA", "", 1);
  EXPECT_EQ(CudaDriver::sharedWithLibTorch(), TorchReference::cudaAvailable());
  ::unsetenv("CUSET_LIBCUDA");
  EXPECT_EQ(CudaDriver::sharedWithLibTorch(), TorchReference::cudaAvailable());
}

TEST(CudaBackend, ArchitectureFollowsTheDevice) {
  EXPECT_EQ(archForDevice("9.0"), "sm_90");
  EXPECT_EQ(archForDevice("8.0"), "sm_80");
  // Newer than NVRTC knows: PTX for its newest architecture, JIT-compiled by the driver.
  EXPECT_EQ(archForDevice("99.9").rfind("compute_", 0), 0u) << archForDevice("99.9");
  EXPECT_EQ(archForDevice(""), "sm_90");
}

// Triton's code for Hopper and newer needs the architecture-specific target (wgmma: sm_90a); the run's
// own target stays the plain one, as load_inline's default flags are.
TEST(CudaBackend, ArchitectureSpecificTargetsExistFromHopperOn) {
  EXPECT_EQ(archNumber("sm_90"), 90);
  EXPECT_EQ(archNumber("compute_120a"), 120);
  EXPECT_EQ(archNumber("sm_9x"), 0);
  EXPECT_EQ(archNumber("9.0"), 0);
  EXPECT_EQ(archSpecificTarget("sm_90"), "sm_90a");
  EXPECT_EQ(archSpecificTarget("compute_100"), "compute_100a");
  EXPECT_EQ(archSpecificTarget("sm_80"), "");
  EXPECT_EQ(archSpecificTarget("sm_90a"), "");
}

// Triton's autotuner compares configurations by do_bench's torch.quantile(times, [0.5, 0.2, 0.8]):
// linear interpolation between order statistics. The expected values are torch's own.
TEST(TritonBenchmark, QuantilesAreTorchs) {
  using detail::quantileOf;
  EXPECT_DOUBLE_EQ(quantileOf({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantileOf({4, 3, 2, 1}, 0.2), 1.6);
  EXPECT_NEAR(quantileOf({1, 2, 3, 4}, 0.8), 3.4000000000000004, 1e-15);
  EXPECT_DOUBLE_EQ(quantileOf({5}, 0.2), 5.0);
  EXPECT_NEAR(quantileOf({0.3, 0.1, 0.2, 0.9, 0.5, 0.25, 0.7}, 0.2), 0.21000000000000002, 1e-15);
  EXPECT_NEAR(quantileOf({0.3, 0.1, 0.2, 0.9, 0.5, 0.25, 0.7}, 0.8), 0.6600000000000001, 1e-15);
  EXPECT_DOUBLE_EQ(quantileOf({}, 0.5), 0.0);
}

TEST(NvmlClockMonitor, NamesTheReasonsThatMatter) {
  EXPECT_EQ(describeThrottleReasons(0x1 | 0x2), "");  // idle, application clocks: not a slowdown
  EXPECT_EQ(describeThrottleReasons(0x4 | 0x40), "power cap, thermal slowdown (hardware)");
  EXPECT_EQ(kSignificantThrottleReasons & 0x1, 0u);
}

// On a GPU: the bundled relu solution is correct and gets a GPU timing; its bad solution is caught.
TEST(CudaBackend, JudgesAndTimesARealKernel) {
  if (!CudaDriver::get()) GTEST_SKIP() << "no usable GPU: " << CudaDriver::get().error();
  test::TempDir dir;
  EvalConfig c;
  c.problemsDir = CUSET_PROBLEMS_DIR;
  c.candidatesPath = std::string(CUSET_PROBLEMS_DIR) + "/level1/leaky_relu";
  c.outDir = dir / "run";
  c.cacheDir = dir / "cache";
  c.backend = BackendKind::cuda;
  c.sizeSet = "small";
  c.cuda.maxSeconds = 2.0;
  c.showProgress = false;
  const EvalRunSummary s = runEvaluation(c);
  ASSERT_EQ(s.results.size(), 2u);
  for (const auto& r : s.results) {
    if (r.origin.find("bad_") != std::string::npos) {
      EXPECT_EQ(r.verdict, Verdict::runtime_error) << r.reason;
    } else {
      EXPECT_EQ(r.verdict, Verdict::correct) << r.reason;
      EXPECT_TRUE(isGpuTiming(r.timingKind)) << r.timingKind;
      EXPECT_GE(r.timingSamplesMs.size(), 10u);
    }
  }
}

}  // namespace
}  // namespace cuset

namespace cuset {
namespace {

// The reference's timing kept per (problem, size set, GPU, driver, LibTorch, timing rule): what one run
// measured, a later run on the same kind of machine finds; anything else in the key is a miss.
TEST(ReferenceTimingCache, KeepsOneMeasurementPerProblemAndMachineKind) {
  const test::TempDir dir;
  std::filesystem::copy(std::filesystem::path(CUSET_PROBLEMS_DIR) / "level1" / "relu", dir / "relu");
  const Problem relu = loadProblem(dir / "relu");
  const nlohmann::json device = {{"name", "NVIDIA H100 80GB HBM3"}, {"driver_version", 13000}, {"l2_bytes", 50 << 20}};
  const CudaOptions options;
  const nlohmann::json timing = {
      {"kind", "cuda_cupti"}, {"samples_ms", {1.5, 1.25}}, {"event_samples_ms", {1.75, 1.5}}, {"problems", nlohmann::json::array()}};

  ReferenceTimingCache cache(dir / "kept");
  const ReferenceTimingKey key = referenceTimingKey(cache, relu, "full", options, device);
  EXPECT_EQ(key.problem, "level1/relu");
  EXPECT_FALSE(cache.find(key));
  cache.store(key, timing);
  ASSERT_TRUE(std::filesystem::exists(cache.fileFor(key)));
  EXPECT_EQ(cache.fileFor(key).parent_path().filename(), "NVIDIA_H100_80GB_HBM3");  // KernelBench's results/timing/<hardware>/

  // Another process of a later run: found on disk, with when it was measured.
  ReferenceTimingCache later(dir / "kept");
  const auto found = later.find(referenceTimingKey(later, relu, "full", options, device));
  ASSERT_TRUE(found);
  EXPECT_EQ((*found)["samples_ms"], timing["samples_ms"]);
  EXPECT_EQ((*found)["event_samples_ms"], timing["event_samples_ms"]);
  EXPECT_FALSE((*found)["measured_at"].get<std::string>().empty());

  // Another GPU, driver, LibTorch, size set or timing rule is another measurement.
  auto differs = [&](nlohmann::json d, const std::string& sizeSet, const CudaOptions& o) {
    ReferenceTimingCache fresh(dir / "kept");
    return !fresh.find(referenceTimingKey(fresh, relu, sizeSet, o, d));
  };
  nlohmann::json otherGpu = device, otherDriver = device;
  otherGpu["name"] = "NVIDIA H200";
  otherDriver["driver_version"] = 13010;
  CudaOptions otherRule;
  otherRule.timer = "events";
  EXPECT_TRUE(differs(otherGpu, "full", options));
  EXPECT_TRUE(differs(otherDriver, "full", options));
  EXPECT_TRUE(differs(device, "small", options));
  EXPECT_TRUE(differs(device, "full", otherRule));
  ReferenceTimingKey otherTorch = key;
  otherTorch.torch = "0.0.1";
  EXPECT_FALSE(later.find(otherTorch));

  // An edited problem is another reference.
  test::writeText(dir / "relu" / "problem.yaml", test::readText(dir / "relu" / "problem.yaml") + "\n# edited\n");
  EXPECT_TRUE(differs(device, "full", options));

  // A damaged entry is a miss (timed again), never an error; the next measurement replaces it.
  test::writeText(cache.fileFor(key), "{ not json");
  ReferenceTimingCache damaged(dir / "kept");
  EXPECT_FALSE(damaged.find(key));
  damaged.store(key, timing);
  ReferenceTimingCache repaired(dir / "kept");
  EXPECT_TRUE(repaired.find(key));

  // Without a folder: kept for the process only.
  ReferenceTimingCache memory{std::filesystem::path()};
  EXPECT_TRUE(memory.fileFor(key).empty());
  memory.store(key, timing);
  EXPECT_TRUE(memory.find(key));
}

}  // namespace
}  // namespace cuset
