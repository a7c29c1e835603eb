#include "cuset/evaluator/sim/sim_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/correctness/correctness_trials.hpp"
#include "cuset/evaluator/correctness/device_region.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/results/output_comparison.hpp"

namespace cuset {

void runSimBackend(const Problem& problem, const LaunchManifest& manifest, std::string_view source, const SimCompiler& compiler,
                   SandboxPool& sandbox, ReferenceCache& references, const CorrectnessOptions& options, EvalResult& result) {
  auto finish = [&](Verdict v, std::string reason) {
    result.verdict = v;
    result.reason = std::move(reason);
  };
  const SimCompileOutput built = compiler.compile(source, manifest.kernelNames());
  result.timings.simCompileMs = built.milliseconds;
  if (!built.rejection.empty()) return finish(Verdict::invalid_submission, built.rejection);
  if (!built.unsupported.empty()) return finish(Verdict::unsupported, "the CPU simulator cannot run this kernel (judge it with --backend cuda): " + built.unsupported);
  if (!built.ok) {
    result.compileLog += "\n--- host compiler (sim backend) ---\n" + built.log;
    // NVRTC compiled it (every backend's gate), so it is CUDA; what the host build rejects (inline PTX,
    // a device intrinsic the simulator lacks) is the simulator's limit, never the model's fault.
    return finish(Verdict::unsupported, "the CPU simulator cannot run this kernel (judge it with --backend cuda): " + firstErrorLine(built.log));
  }
  const auto start = std::chrono::steady_clock::now();
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  auto launches = resolveLaunches(manifest, sizes);
  if (!launches) return finish(Verdict::invalid_submission, launches.error());
  // Inputs against inaccessible pages: an over-read faults as memcheck would report it on a GPU.
  const RegionLayout layout = RegionLayout::plan(problem, manifest, sizes, RegionLayout::Fences::afterInputs);
  result.timingKind = "cpu_simulator";

  // Every trial of the candidate on one worker, which keeps its __device__ globals between them.
  SandboxPool::Lease worker = sandbox.acquire();
  const TrialExecutor execute = [&](std::vector<std::byte>& region, const TrialRequest& request) {
    SimJob job;
    job.library = built.library;
    job.stateKey = result.key();
    job.fibers = built.needsFibers;
    job.reverseThreadOrder = request.reverseThreadOrder;
    job.launches = *launches;
    job.layout = &layout;
    job.region = std::move(region);
    TrialRun run = worker.run(job);
    region = std::move(job.region);
    result.timings.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return run;
  };
  runCorrectnessTrials(problem, layout, references, options, execute, "the simulator", true, result);
}

}  // namespace cuset
