// CPU simulator throughput: simulated CUDA threads per second for an elementwise kernel (plain calls,
// no fibers), a shared-memory block reduction (__syncthreads, fibers) and a warp-shuffle reduction
// (fibers, warp collectives), on 1 and 2 host threads; then the bundled suite end to end on the sim
// backend with a cold cache (host compile, 5 trials + rerun each, sandboxed), as candidates per minute;
// and one candidate's host build and the suite, with the precompiled prelude and without, side by side.
// With and without the alignment check and FMA contraction, and at -O2 (issue #33), on an elementwise
// kernel, a simple loop and one host build.
// Targets (issue #3): a 1M-thread elementwise kernel under 1 s on one core; the bundled solutions in a
// few minutes on 2 cores. Then (issue #19) the suite's GEMM solutions side by side at 128x128x128:
// scalar tiles, cp.async double buffering (inline PTX), WMMA and mma.sync + ldmatrix (inline PTX), as
// simulated threads/s and GFLOP/s, with each one's host build.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/pipeline/solution_check.hpp"
#include "cuset/evaluator/sandbox/sim_library.hpp"
#include "recording_reporter.hpp"

namespace fs = std::filesystem;
using namespace cuset;

namespace {

const char* kSource = R"(
extern "C" __global__ void axpy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + y[i];
}
extern "C" __global__ void block_sum(const float* x, float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void warp_sum(const float* x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}
)";

fs::path scratch() {
  static const fs::path dir = fs::temp_directory_path() / fmt::format("cuset-bench-sim-{}", ::getpid());
  return dir;
}

// A loop of simple arithmetic per thread, as a model-written kernel that recomputes a row per
// element does: the simulator's throughput on compiled loops rather than on thread switches.
const char* kLoopSource = R"(
extern "C" __global__ void row_loop(const float* x, float* y, int n, int iterations) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < iterations; ++k) acc += x[(i + k) % n] * 0.5f;
  if (i < n) y[i] = acc;
}
)";

// The host build's variants measured side by side (issue #33): the default, without each of the flags
// that make its verdicts the GPU's, at -O2, and with its loads instrumented as a layout with buffer
// tails asks (tailReadsChecked; in the suite, noTailReadCheck turns that off for the tails' problems).
enum class Build { standard, noAlignmentCheck, noFmaContraction, optimizedO2, tailReadsChecked, noTailReadCheck };

SimBuildChecks checksFor(Build build) { return {.tailReads = build == Build::tailReadsChecked}; }

SimCodegen codegenFor(Build build) {
  SimCodegen c;
  if (build == Build::noAlignmentCheck) c.alignmentCheck = false;
  if (build == Build::noFmaContraction) c.contractFma = false;
  if (build == Build::optimizedO2) c.optimization = "-O2";
  if (build == Build::noTailReadCheck) c.tailReadCheck = false;
  return c;
}

SimCompilerOptions optionsFor(Build build, const fs::path& pchDir) { return SimCompilerOptions{.pchDir = pchDir, .codegen = codegenFor(build)}; }

// The elementwise and loop kernels, built as one variant.
struct VariantKernels {
  SimLibrary plain;  // built from axpy alone: no barrier in the source, so threads are plain calls
  SimLibrary loop;
};

const std::string& plainSource() {
  static const std::string source = std::string(kSource).substr(0, std::string(kSource).find("extern \"C\" __global__ void block_sum"));
  return source;
}

SimLibrary openBuilt(const SimCompiler& c, const std::string& source, std::vector<std::string> names, SimBuildChecks checks = {}) {
  auto built = c.compile(source, names, checks);
  if (!built.ok) throw std::runtime_error(built.log);
  return std::move(SimLibrary::open(built.library)).value();
}

// The barrier and shuffle kernels (fibers), standard build.
const SimLibrary& fiberKernels() {
  static const SimLibrary library = openBuilt(SimCompiler(SimToolchain::fromBuild(), scratch() / "sim"), kSource, {"block_sum", "warp_sum"});
  return library;
}

// The elementwise and loop kernels of each build variant, built once on first use.
const VariantKernels& variantKernels(Build build) {
  static std::map<Build, VariantKernels> built;
  auto it = built.find(build);
  if (it == built.end()) {
    const std::string name = fmt::format("variant-{}", static_cast<int>(build));
    const SimCompiler compiler(SimToolchain::fromBuild(), scratch() / name, optionsFor(build, scratch() / (name + "-pch")));
    it = built
             .emplace(build, VariantKernels{openBuilt(compiler, plainSource(), {"axpy"}, checksFor(build)),
                                            openBuilt(compiler, kLoopSource, {"row_loop"}, checksFor(build))})
             .first;
  }
  // Two tails, away from the kernels' buffers, as a problem with an odd-sized input and output has:
  // every instrumented load compares itself with both.
  static const std::vector<std::byte> elsewhere(64);
  cuset_sim::set_tail_ranges(
      {{elsewhere.data() + 12, elsewhere.data() + 16, 12, "input", "a"}, {elsewhere.data() + 44, elsewhere.data() + 48, 12, "output", "b"}});
  return it->second;
}

void runKernel(benchmark::State& state, const SimLibrary& lib, const char* name, bool fibers, int blocks, int threads, std::vector<void*> args) {
  cuset_sim::LaunchSpec spec;
  spec.kernel = lib.entry(name);
  spec.args = args.data();
  spec.grid[0] = static_cast<unsigned>(blocks);
  spec.block[0] = static_cast<unsigned>(threads);
  cuset_sim::LaunchOptions options;
  options.useFibers = fibers;
  for (auto _ : state) {
    auto outcome = cuset_sim::run_launch(spec, options);
    if (!outcome.ok) state.SkipWithError(outcome.error.c_str());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t{blocks} * threads);
}

void BM_Elementwise(benchmark::State& state, Build build) {
  const int n = 1 << 20;
  std::vector<float> x(n, 1.0f), y(n, 0.0f);
  float *px = x.data(), *py = y.data();
  int nn = n;
  runKernel(state, variantKernels(build).plain, "axpy", false, n / 256, 256, {&px, &py, &nn});
}

// 64K threads x 1000 iterations; items are loop iterations.
void BM_SimpleLoop(benchmark::State& state, Build build) {
  const int n = 1 << 16, iterations = 1000;
  std::vector<float> x(n, 1.0f), y(n, 0.0f);
  float *px = x.data(), *py = y.data();
  int nn = n, it = iterations;
  runKernel(state, variantKernels(build).loop, "row_loop", false, n / 256, 256, {&px, &py, &nn, &it});
  state.SetItemsProcessed(state.iterations() * std::int64_t{n} * iterations);
}

void BM_SharedReduction(benchmark::State& state) {
  const int blocks = 1024, threads = 256;
  std::vector<float> x(blocks * threads, 1.0f), out(blocks);
  float *px = x.data(), *po = out.data();
  runKernel(state, fiberKernels(), "block_sum", true, blocks, threads, {&px, &po});
}

void BM_WarpShuffle(benchmark::State& state) {
  const int blocks = 1024, threads = 256;
  std::vector<float> x(blocks * threads, 1.0f), out(blocks * threads / 32);
  float *px = x.data(), *po = out.data();
  runKernel(state, fiberKernels(), "warp_sum", true, blocks, threads, {&px, &po});
}

// The suite's own GEMM solutions (read from problems/, not copied here), one launch over n x n x n.
struct GemmSolution {
  const char* label;
  const char* file;  // under problems/level1
  const char* kernel;
  bool half;                             // float16 operands (else float32)
  unsigned tileRows, tileCols, threads;  // of C per block; threads per block (a 16x16 block when 256)
};
constexpr GemmSolution kGemms[] = {
    {"scalar_tiles_fp32", "matmul_square/solutions/tiled_16.cu", "matmul_tiled", false, 16, 16, 256},
    {"cp_async_double_buffer_fp32", "matmul_square/solutions/cp_async_double_buffer.cu", "matmul_cp_async", false, 16, 16, 256},
    {"wmma_fp16", "matmul_fp16/solutions/wmma_16x32.cu", "matmul_fp16_wmma", true, 64, 32, 128},
    {"mma_sync_ldmatrix_fp16", "matmul_fp16/solutions/mma_sync_ldmatrix.cu", "matmul_fp16_mma", true, 32, 32, 128},
};
constexpr int kGemmN = 128;

std::string gemmSource(const GemmSolution& g) { return readFile(fs::path(CUSET_PROBLEMS_DIR) / "level1" / g.file); }

void BM_Gemm(benchmark::State& state, const GemmSolution& g) {
  const SimCompiler compiler(SimToolchain::fromBuild(), scratch() / "gemm");
  const SimCompileOutput built = compiler.compile(gemmSource(g), {g.kernel});
  if (!built.ok) {
    state.SkipWithError((built.unsupported + built.log).c_str());
    return;
  }
  auto lib = SimLibrary::open(built.library);
  if (!lib) {
    state.SkipWithError(lib.error().c_str());
    return;
  }
  const std::size_t elements = std::size_t{kGemmN} * kGemmN, bytes = elements * (g.half ? 2 : 4);
  std::vector<std::byte> a(bytes), b(bytes), c(bytes);
  for (std::size_t i = 0; i < bytes; ++i) a[i] = b[i] = std::byte{0x38};  // small finite values in either type
  void *pa = a.data(), *pb = b.data(), *pc = c.data();
  int n = kGemmN;
  std::vector<void*> args = g.half ? std::vector<void*>{&pa, &pb, &pc, &n, &n, &n} : std::vector<void*>{&pa, &pb, &pc, &n};
  cuset_sim::LaunchSpec spec;
  spec.kernel = lib->entry(g.kernel);
  spec.args = args.data();
  spec.grid[0] = kGemmN / g.tileCols;
  spec.grid[1] = kGemmN / g.tileRows;
  if (g.threads == 256) {
    spec.block[0] = spec.block[1] = 16;
  } else {
    spec.block[0] = g.threads;
  }
  cuset_sim::LaunchOptions options;
  options.useFibers = built.needsFibers;
  for (auto _ : state) {
    auto outcome = cuset_sim::run_launch(spec, options);
    if (!outcome.ok) state.SkipWithError(outcome.error.c_str());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t{spec.grid[0]} * spec.grid[1] * g.threads);
  state.counters["gflops"] =
      benchmark::Counter(2.0 * kGemmN * kGemmN * kGemmN * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// Each GEMM solution's host build from a fresh source (never a cache hit).
void BM_GemmHostBuild(benchmark::State& state, const GemmSolution& g) {
  const SimCompiler compiler(SimToolchain::fromBuild(), scratch() / "gemm-build");
  const std::string source = gemmSource(g);
  int n = 0;
  for (auto _ : state) {
    const SimCompileOutput out = compiler.compile(source + fmt::format("// build {}\n", n++), {g.kernel});
    if (!out.ok || out.cacheHit) state.SkipWithError("unexpected build");
  }
}

// One candidate's host build (a fresh source each iteration, so never a cache hit), with the prelude
// precompiled (the default) and parsed from source: the per-candidate cost the .gch removes.
void BM_HostBuild(benchmark::State& state, bool precompiled, Build build) {
  const fs::path dir = scratch() / fmt::format("build-{}-{}", precompiled ? "pch" : "source", static_cast<int>(build));
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", optionsFor(build, precompiled ? dir / "pch" : fs::path()));
  const std::string& axpy = plainSource();
  if (!compiler.compile(axpy, {"axpy"}, checksFor(build)).ok) state.SkipWithError("warm-up build failed");  // builds the .gch and the baseline
  int n = 0;
  for (auto _ : state) {
    const SimCompileOutput out = compiler.compile(axpy + fmt::format("// build {}\n", n++), {"axpy"}, checksFor(build));
    if (!out.ok || out.cacheHit || out.precompiledPrelude != precompiled) state.SkipWithError("unexpected build");
  }
}

// The bundled suite on the sim backend, cold caches, two jobs: what `cuset eval --backend sim
// --candidates problems` costs on a fresh machine.
void BM_SuiteEndToEnd(benchmark::State& state, bool precompiled, Build build) {
  std::size_t candidates = 0;
  int round = 0;
  double seconds = 0.0;
  const std::string variant = fmt::format("{}-{}", precompiled ? "pch" : "source", static_cast<int>(build));
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    EvalConfig c;
    c.problemsDir = CUSET_PROBLEMS_DIR;
    c.candidatesPath = CUSET_PROBLEMS_DIR;
    c.outDir = scratch() / fmt::format("run-{}-{}", variant, round);
    c.cacheDir = scratch() / fmt::format("cache-{}-{}", variant, round++);
    c.backend = BackendKind::sim;
    c.precompiledPrelude = precompiled;
    c.simCodegen = codegenFor(build);
    c.jobs = 2;
    c.showProgress = false;
    const EvalRunSummary s = runEvaluation(c);
    candidates = s.results.size();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Good solutions must be correct and bad_*.cu must get their recorded verdicts, as `problems check
    // --solutions` requires: a faster build that changed a verdict would not count.
    for (const auto& row : compareSolutionVerdicts(ProblemSuite::load(CUSET_PROBLEMS_DIR), s.results, BackendKind::sim)) {
      if (!row.ok()) state.SkipWithError((row.problem + " " + row.file + ": " + row.failure).c_str());
    }
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["candidates_per_min"] = static_cast<double>(candidates) * 60.0 * static_cast<double>(state.iterations()) / seconds;
}

// Every benchmark for one size of the host-thread pool (the builds and the suite only once, at 2).
void registerBenchmarks(int hostThreads) {
  for (const auto& [suffix, build] : {std::pair{"", Build::standard}, std::pair{"_no_alignment_check", Build::noAlignmentCheck},
                                      std::pair{"_no_fma_contraction", Build::noFmaContraction}, std::pair{"_O2", Build::optimizedO2},
                                      std::pair{"_tail_reads_checked", Build::tailReadsChecked}}) {
    benchmark::RegisterBenchmark(fmt::format("elementwise_1M{}/host_threads:{}", suffix, hostThreads).c_str(), BM_Elementwise, build)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(fmt::format("simple_loop_64Mx{}/host_threads:{}", suffix, hostThreads).c_str(), BM_SimpleLoop, build)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark(fmt::format("shared_reduction_256K/host_threads:{}", hostThreads).c_str(), BM_SharedReduction)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark(fmt::format("warp_shuffle_256K/host_threads:{}", hostThreads).c_str(), BM_WarpShuffle)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  if (hostThreads == 2) {
    benchmark::RegisterBenchmark("host_build/precompiled_prelude", BM_HostBuild, true, Build::standard)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark("host_build/prelude_from_source", BM_HostBuild, false, Build::standard)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark("host_build/precompiled_prelude_O2", BM_HostBuild, true, Build::optimizedO2)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark("host_build/precompiled_prelude_no_fma_contraction", BM_HostBuild, true, Build::noFmaContraction)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark("host_build/precompiled_prelude_tail_reads_checked", BM_HostBuild, true, Build::tailReadsChecked)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(8)
        ->UseRealTime();
    for (const auto& [name, precompiled, build] :
         {std::tuple{"precompiled_prelude", true, Build::standard}, std::tuple{"prelude_from_source", false, Build::standard},
          std::tuple{"precompiled_prelude_no_alignment_check", true, Build::noAlignmentCheck},
          std::tuple{"precompiled_prelude_no_fma_contraction", true, Build::noFmaContraction},
          std::tuple{"precompiled_prelude_O2", true, Build::optimizedO2},
          std::tuple{"precompiled_prelude_no_tail_read_check", true, Build::noTailReadCheck}}) {
      benchmark::RegisterBenchmark(fmt::format("suite_end_to_end/jobs:2/{}", name).c_str(), BM_SuiteEndToEnd, precompiled, build)
          ->Unit(benchmark::kSecond)
          ->Iterations(1)
          ->UseRealTime();
    }
    for (const GemmSolution& g : kGemms) {
      benchmark::RegisterBenchmark(fmt::format("gemm_128/{}", g.label).c_str(), BM_Gemm, g)->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark(fmt::format("gemm_host_build/{}", g.label).c_str(), BM_GemmHostBuild, g)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3)
          ->UseRealTime();
    }
  }
}

// Per launch: time and simulated threads per second.
void printLaunchTable(const bench::RecordingReporter& reporter) {
  fmt::print("\n{:<50} {:>12} {:>22}\n", "benchmark", "ms/launch", "simulated threads/s (loop iterations/s)");
  for (const auto& [name, r] : reporter.runs) {
    if (r.error_occurred || name.rfind("suite", 0) == 0 || name.rfind("host_build", 0) == 0 || name.rfind("gemm", 0) == 0) continue;
    const double ms = r.GetAdjustedRealTime();
    const double rate = r.counters.count("items_per_second") ? static_cast<double>(r.counters.at("items_per_second")) : 0.0;
    fmt::print("{:<50} {:>12.1f} {:>22.3g}\n", name, ms, rate);
  }
  fmt::print("\n");
}

// The side-by-side ratios: host builds, the bundled suite, and the GEMM solutions against the scalar one.
void printSideBySide(const bench::RecordingReporter& reporter) {
  auto seconds = [&](const std::string& prefix) {
    for (const auto& [name, r] : reporter.runs) {
      if (name.rfind(prefix, 0) == 0 && !r.error_occurred) return r.GetAdjustedRealTime();
    }
    return 0.0;
  };
  const double pch = seconds("host_build/precompiled_prelude/"), source = seconds("host_build/prelude_from_source");
  const double suitePch = seconds("suite_end_to_end/jobs:2/precompiled_prelude/"),
               suiteSource = seconds("suite_end_to_end/jobs:2/prelude_from_source");
  fmt::print("{:<40} {:>14} {:>14} {:>8}\n", "side by side", "precompiled", "from source", "ratio");
  if (pch > 0) fmt::print("{:<40} {:>11.0f} ms {:>11.0f} ms {:>7.2f}x\n", "one candidate's host build", pch, source, source / pch);
  if (const double o2 = seconds("host_build/precompiled_prelude_O2"); pch > 0 && o2 > 0) {
    fmt::print("{:<40} {:>11.0f} ms {:>11.0f} ms {:>7.2f}x  (-O1 / -O2)\n", "one candidate's host build", pch, o2, o2 / pch);
  }
  if (const double unfused = seconds("host_build/precompiled_prelude_no_fma_contraction"); pch > 0 && unfused > 0) {
    fmt::print("{:<40} {:>11.0f} ms {:>11.0f} ms {:>7.2f}x  (with / without FMA contraction)\n", "one candidate's host build", pch, unfused,
               unfused / pch);
  }
  if (suitePch > 0)
    fmt::print("{:<40} {:>12.1f} s {:>12.1f} s {:>7.2f}x\n", "bundled suite, cold caches", suitePch, suiteSource, suiteSource / suitePch);
  for (const auto& [suffix, label] : {std::pair{"_O2", "(-O1 / -O2)"}, std::pair{"_no_alignment_check", "(with / without alignment check)"},
                                      std::pair{"_no_fma_contraction", "(with / without FMA contraction)"}}) {
    if (const double other = seconds(fmt::format("suite_end_to_end/jobs:2/precompiled_prelude{}", suffix)); suitePch > 0 && other > 0) {
      fmt::print("{:<40} {:>12.1f} s {:>12.1f} s {:>7.2f}x  {}\n", "bundled suite, cold caches", suitePch, other, other / suitePch, label);
    }
  }
  const double scalar = seconds("gemm_128/scalar_tiles_fp32");
  fmt::print("\n{:<40} {:>10} {:>20} {:>14} {:>12} {:>14}\n", "GEMM 128x128x128 on the simulator", "ms/launch", "simulated threads/s", "sim GFLOP/s",
             "vs scalar", "host build ms");
  for (const GemmSolution& g : kGemms) {
    const std::string label = g.label;
    for (const auto& [name, r] : reporter.runs) {
      if (name.rfind("gemm_128/" + label + "/", 0) != 0 || r.error_occurred) continue;
      const double ms = r.GetAdjustedRealTime();
      const double rate = r.counters.count("items_per_second") ? static_cast<double>(r.counters.at("items_per_second")) : 0.0;
      const double gflops = r.counters.count("gflops") ? static_cast<double>(r.counters.at("gflops")) : 0.0;
      fmt::print("{:<40} {:>10.1f} {:>20.3g} {:>14.3f} {:>11.2f}x {:>14.0f}\n", label, ms, rate, gflops, scalar > 0 ? ms / scalar : 0.0,
                 seconds("gemm_host_build/" + label));
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  ::setenv("CUSET_WORKER", CUSET_BINARY, 0);
  for (int hostThreads : {1, 2}) {
    // One pool of host threads at a time: the runtime's pool is process-wide.
    cuset_sim::start_host_threads(hostThreads);
    benchmark::Initialize(&argc, argv);
    bench::RecordingReporter reporter;
    registerBenchmarks(hostThreads);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
    printLaunchTable(reporter);
    if (hostThreads == 2) printSideBySide(reporter);
  }
  std::error_code ec;
  fs::remove_all(scratch(), ec);
  benchmark::Shutdown();
  return 0;
}
