#include "cuset/evaluator/sim_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/compiler_log.hpp"
#include "cuset/evaluator/correctness_trials.hpp"
#include "cuset/evaluator/device_region.hpp"
#include "cuset/evaluator/input_generator.hpp"
#include "cuset/evaluator/output_comparison.hpp"

namespace cuset {

std::vector<HostTensor> ReferenceCache::run(const Problem& problem, const std::vector<HostTensor>& inputs, const SizeBindings& sizes) {
  Entry* entry = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto& slot = entries_[problem.id];
    if (!slot) slot = std::make_unique<Entry>();
    entry = slot.get();
  }
  std::lock_guard lock(entry->mutex);  // one reference run at a time per problem
  if (!entry->reference) entry->reference = std::make_unique<TorchReference>(TorchReference::compile(problem));
  return entry->reference->run(inputs, sizes, onGpu_);
}

void runSimBackend(const Problem& problem, const LaunchManifest& manifest, std::string_view source, const SimCompiler& compiler,
                   SandboxPool& sandbox, ReferenceCache& references, const CorrectnessOptions& options, EvalResult& result) {
  auto finish = [&](Verdict v, std::string reason) {
    result.verdict = v;
    result.reason = std::move(reason);
  };
  const SimCompileOutput built = compiler.compile(source, manifest.kernelNames());
  result.timings.simCompileMs = built.milliseconds;
  if (!built.rejection.empty()) return finish(Verdict::invalid_submission, built.rejection);
  if (!built.ok) {
    result.compileLog += "\n--- host compiler (sim backend) ---\n" + built.log;
    return finish(Verdict::compile_error, "the CPU simulator cannot compile this kernel: " + firstErrorLine(built.log));
  }
  const auto start = std::chrono::steady_clock::now();
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  auto launches = resolveLaunches(manifest, sizes);
  if (!launches) return finish(Verdict::invalid_submission, launches.error());
  const RegionLayout layout = RegionLayout::plan(problem, manifest, sizes);
  result.timingKind = "cpu_simulator";

  const TrialExecutor execute = [&](std::vector<std::byte>& region, const TrialRequest& request) {
    SimJob job;
    job.library = built.library;
    job.fibers = built.needsFibers;
    job.reverseThreadOrder = request.reverseThreadOrder;
    job.launches = *launches;
    job.layout = &layout;
    job.region = std::move(region);
    TrialRun run = sandbox.run(job);
    region = std::move(job.region);
    result.timings.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return run;
  };
  runCorrectnessTrials(problem, layout, references, options, execute, "the simulator", true, result);
}


}  // namespace cuset
