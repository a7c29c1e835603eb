// Compile-stage latency: NVRTC in-process (uncached, and cache hit) against `nvcc -cubin` on the same
// candidate sources, plus the harness's own per-candidate overhead, measured side by side in one run.
// Prints a ratio table after Google Benchmark's own report. Targets (issue #2): NVRTC >= 10x faster than
// nvcc -cubin per kernel, a cache hit under 5 ms, harness overhead under 10% of the NVRTC time.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/compile/nvrtc_prelude.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace fs = std::filesystem;
using namespace cuset;

namespace {

struct Fixture {
  ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  std::vector<Candidate> candidates = readCandidates(CUSET_PROBLEMS_DIR, "bench");
  fs::path scratch = fs::temp_directory_path() / fmt::format("cuset-bench-{}", ::getpid());
  NvrtcCompiler uncached{CompileOptions{}, {}};
  NvrtcCompiler cached{CompileOptions{}, scratch / "cache"};

  Fixture() { fs::create_directories(scratch); }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }
  std::vector<std::string> kernels(const Candidate& c) const { return parseLaunchManifest(c.source, *suite.find(c.problemId))->kernelNames(); }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

std::string label(const Candidate& c) { return c.problemId.substr(c.problemId.find('/') + 1); }

// A fresh source for every iteration (a comment with a counter), so NVRTC does the full work each time
// and nothing can be served from any cache.
void BM_NvrtcUncached(benchmark::State& state, std::size_t index) {
  const Candidate& c = fixture().candidates[index];
  const auto names = fixture().kernels(c);
  std::size_t n = 0;
  for (auto _ : state) {
    auto out = fixture().uncached.compile(c.source + fmt::format("\n// {}\n", n++), names);
    if (out.status != CompileOutput::Status::ok) state.SkipWithError(out.log.c_str());
  }
}

void BM_NvrtcCacheHit(benchmark::State& state, std::size_t index) {
  const Candidate& c = fixture().candidates[index];
  const auto names = fixture().kernels(c);
  fixture().cached.compile(c.source, names);
  for (auto _ : state) {
    auto out = fixture().cached.compile(c.source, names);
    if (!out.cacheHit) state.SkipWithError("expected a cache hit");
  }
}

void BM_NvccCubin(benchmark::State& state, std::size_t index) {
  const Candidate& c = fixture().candidates[index];
  const fs::path src = fixture().scratch / fmt::format("{}.cu", label(c));
  writeFileAtomic(src, c.source);
  // nvcc gets the half headers exactly when NVRTC's prelude would include them, so both compile the
  // same code.
  const std::string halfHeaders = sourceNeedsHalfTypes(c.source) ? "-include cuda_fp16.h -include cuda_bf16.h" : "";
  const std::string command =
      fmt::format("{} -cubin -arch=sm_90 -std=c++17 -lineinfo {} {} -o {}.cubin", CUSET_NVCC, halfHeaders, src.string(), src.string());
  for (auto _ : state) {
    if (std::system(command.c_str()) != 0) state.SkipWithError("nvcc failed");
  }
}

// Everything the harness does per candidate besides compiling: find the problem, parse and validate
// the manifest, hash the source, build and serialise the result record.
void BM_HarnessOverhead(benchmark::State& state, std::size_t index) {
  const Candidate& c = fixture().candidates[index];
  for (auto _ : state) {
    const Problem* p = fixture().suite.find(c.problemId);
    auto manifest = parseLaunchManifest(c.source, *p);
    EvalResult r;
    r.problem = c.problemId;
    r.model = c.model;
    r.source = c.source;
    r.sourceHash = hashString(c.source).hex();
    r.verdict = manifest.ok() ? Verdict::compiled : Verdict::invalid_submission;
    std::string line = toJson(r).dump();
    benchmark::DoNotOptimize(line);
  }
}

// Collects each benchmark's mean real time (ms) for the ratio table.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      // Every benchmark here reports in milliseconds, the unit GetAdjustedRealTime() returns.
      if (!r.error_occurred) ms[r.run_name.function_name] = r.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

double firstCompileInProcessMs() {
  const Candidate& c = fixture().candidates.front();
  const auto start = std::chrono::steady_clock::now();
  fixture().uncached.compile(c.source + "\n// cold\n", fixture().kernels(c));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const double coldMs = firstCompileInProcessMs();
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < fixture().candidates.size(); ++i) {
    const std::string l = label(fixture().candidates[i]);
    labels.push_back(l);
    benchmark::RegisterBenchmark(("nvcc_cubin/" + l).c_str(), BM_NvccCubin, i)->Unit(benchmark::kMillisecond)->Iterations(5);
    benchmark::RegisterBenchmark(("nvrtc_uncached/" + l).c_str(), BM_NvrtcUncached, i)->Unit(benchmark::kMillisecond)->MinTime(1.0);
    benchmark::RegisterBenchmark(("nvrtc_cache_hit/" + l).c_str(), BM_NvrtcCacheHit, i)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("harness_overhead/" + l).c_str(), BM_HarnessOverhead, i)->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  fmt::print("\nfirst NVRTC compile in a fresh process (includes NVRTC start-up): {:.1f} ms\n\n", coldMs);
  fmt::print("{:<16} {:>10} {:>10} {:>10} {:>10} {:>12} {:>14}\n", "kernel", "nvcc ms", "nvrtc ms", "speedup", "hit ms", "harness ms",
             "harness/nvrtc");
  for (const auto& l : labels) {
    auto get = [&](const std::string& prefix) {
      auto it = reporter.ms.find(prefix + "/" + l);
      return it == reporter.ms.end() ? 0.0 : it->second;
    };
    const double nvcc = get("nvcc_cubin"), nvrtc = get("nvrtc_uncached"), hit = get("nvrtc_cache_hit"), harness = get("harness_overhead");
    if (nvrtc == 0.0) continue;
    fmt::print("{:<16} {:>10.1f} {:>10.1f} {:>9.1f}x {:>10.3f} {:>12.3f} {:>13.2f}%\n", l, nvcc, nvrtc, nvrtc > 0 ? nvcc / nvrtc : 0.0, hit, harness,
               100.0 * harness / nvrtc);
  }
  benchmark::Shutdown();
  return 0;
}
