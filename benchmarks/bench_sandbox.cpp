// The cost of carrying a device region to a sandbox worker and back, per trial: the region through the
// shared payload file (the default) against the region through the pipe (the fallback), side by side
// for regions of 1 MiB to 1 GiB, with a kernel that touches one element so that only transport,
// fork and bookkeeping are measured. Prints a table with the ratio.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"
#include "recording_reporter.hpp"

namespace fs = std::filesystem;
using namespace cuset;

namespace {

fs::path scratch() {
  static const fs::path dir = fs::temp_directory_path() / fmt::format("cuset-bench-sandbox-{}", ::getpid());
  return dir;
}

const fs::path& library() {
  static const fs::path lib = [] {
    const SimCompiler compiler(SimToolchain::fromBuild(), scratch() / "sim");
    auto built = compiler.compile("extern \"C\" __global__ void touch(int* y) { y[0] += 1; }", {"touch"});
    if (!built.ok) throw std::runtime_error(built.log);
    return built.library;
  }();
  return lib;
}

struct RegionJob {
  Problem problem;
  LaunchManifest manifest;
  LaunchPlan plan;
  RegionLayout layout;

  explicit RegionJob(std::int64_t elements)
      : problem(
            parseProblem(fmt::format("name: t\nlevel: 1\nsizes: {{small: {{N: {}}}}}\ninputs: {{}}\noutputs: {{y: {{dtype: int32, shape: [N]}}}}\n"
                                     "reference: |\n  def forward(N: int) -> Tensor:\n      return torch.zeros(N, dtype=torch.int32)\n",
                                     elements),
                         "t/problem.yaml", "t")),
        manifest(std::move(parseLaunchManifest("/*@cuset\nlaunches: [{kernel: touch, grid: [1], block: [1], args: [y]}]\n*/", problem)).value()),
        plan(std::move(planFromManifest(manifest, problem.sizes("small"))).value()),
        layout(RegionLayout::plan(problem, plan, problem.sizes("small"))) {}
};

void BM_RoundTrip(benchmark::State& state, bool shared) {
  const std::size_t mib = static_cast<std::size_t>(state.range(0));
  const RegionJob fixture(static_cast<std::int64_t>(mib << 20) / 4);
  SandboxLimits limits;
  limits.sharedPayload = shared;
  limits.timeout = std::chrono::seconds(120);
  SandboxPool pool(1, limits);
  SimJob job;
  job.library = library();
  job.fibers = false;
  job.launches = fixture.plan.kernelSteps();
  job.layout = &fixture.layout;
  job.region = fixture.layout.fill({}, 0);
  pool.run(job);  // starts the worker and sizes the shared file: not part of a trial's cost
  for (auto _ : state) {
    const SimJobResult r = pool.run(job);
    if (r.status != SimJobResult::Status::ok) state.SkipWithError(r.message.c_str());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * job.region.size()));
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("CUSET_WORKER", CUSET_BINARY, 0);
  benchmark::Initialize(&argc, argv);
  const std::vector<std::int64_t> sizes = {1, 64, 512, 1024};
  for (const auto& [name, shared] : {std::pair{"pipe", false}, std::pair{"shared", true}}) {
    auto* b = benchmark::RegisterBenchmark(fmt::format("region_round_trip/{}", name).c_str(), BM_RoundTrip, shared);
    for (auto s : sizes) b->Arg(s);
    b->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  bench::RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  fmt::print("\n{:>10} {:>12} {:>12} {:>8}\n", "region", "pipe ms", "shared ms", "ratio");
  for (auto s : sizes) {
    const auto pipe = reporter.runs.find(fmt::format("region_round_trip/pipe/{}/real_time", s));
    const auto shared = reporter.runs.find(fmt::format("region_round_trip/shared/{}/real_time", s));
    if (pipe == reporter.runs.end() || shared == reporter.runs.end()) continue;
    const double p = pipe->second.GetAdjustedRealTime(), sh = shared->second.GetAdjustedRealTime();
    fmt::print("{:>7} MiB {:>12.1f} {:>12.1f} {:>7.1f}x\n", s, p, sh, p / sh);
  }
  std::error_code ec;
  fs::remove_all(scratch(), ec);
  benchmark::Shutdown();
  return 0;
}
