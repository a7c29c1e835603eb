#include "cuset/evaluator/sim_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/compiler_log.hpp"
#include "cuset/evaluator/device_region.hpp"
#include "cuset/evaluator/input_generator.hpp"
#include "cuset/evaluator/output_comparison.hpp"

namespace cuset {
namespace {

// The first input the kernel changed, or empty.
std::string mutatedInput(const RegionLayout& layout, const std::vector<std::byte>& region, const std::vector<HostTensor>& inputs) {
  std::size_t i = 0;
  for (const auto& slot : layout.slots()) {
    if (slot.role != BufferSlot::Role::input) continue;
    if (std::memcmp(region.data() + slot.offset, inputs[i].data(), slot.bytes) != 0) return slot.name;
    ++i;
  }
  return {};
}

}  // namespace

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
  return entry->reference->run(inputs, sizes);
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

  std::vector<HostTensor> firstOutputs;
  const int total = options.trials + 1;
  for (int t = 0; t < total; ++t) {
    const bool rerun = t == options.trials;  // trial 0 again: same inputs, threads in reverse order
    const int trial = rerun ? 0 : t;
    const bool alternate = trial % 2 == 1;
    const std::string label = rerun ? "determinism rerun of trial 0" : fmt::format("trial {} of {}", t + 1, options.trials);
    const std::vector<HostTensor> inputs = generateInputs(problem, sizes, options.seed, static_cast<std::uint64_t>(trial), alternate);
    const std::vector<HostTensor> want = references.run(problem, inputs, sizes);

    SimJob job;
    job.library = built.library;
    job.fibers = built.needsFibers;
    job.reverseThreadOrder = rerun || alternate;
    job.launches = *launches;
    job.layout = &layout;
    job.region = layout.fill(inputs, t);
    const SimJobResult run = sandbox.run(job);
    result.trials = t + 1;
    result.timings.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    switch (run.status) {
      case SimJobResult::Status::ok: break;
      case SimJobResult::Status::runtimeError: return finish(Verdict::runtime_error, fmt::format("{}: {}", label, run.message));
      case SimJobResult::Status::timeout: return finish(Verdict::timeout, fmt::format("{}: {}", label, run.message));
      case SimJobResult::Status::sandboxViolation: return finish(Verdict::sandbox_violation, fmt::format("{}: {}", label, run.message));
      case SimJobResult::Status::invalidSubmission: return finish(Verdict::invalid_submission, run.message);
      case SimJobResult::Status::harnessError:
        return finish(Verdict::runtime_error, fmt::format("{}: the simulator could not run the kernel: {}", label, run.message));
    }
    result.timingSamplesMs.push_back(run.kernelMs);
    if (auto violation = layout.findGuardViolation(job.region)) return finish(Verdict::runtime_error, fmt::format("{}: {}", label, *violation));

    std::vector<HostTensor> got;
    result.comparisons.clear();
    const OutputComparison* failed = nullptr;
    std::size_t outputIndex = 0;
    for (const auto& slot : layout.slots()) {
      if (slot.role != BufferSlot::Role::output) continue;
      got.push_back(layout.extract(job.region, slot));
      result.comparisons.push_back(compareOutput(slot.name, got.back(), want[outputIndex++], problem.tolerance));
    }
    for (const auto& c : result.comparisons) {
      if (!c.passed() && !failed) failed = &c;
    }
    const std::string mutated = mutatedInput(layout, job.region, inputs);
    if (failed) {
      std::string reason = rerun ? fmt::format("nondeterministic: the {} disagrees with the reference: {}", label, failed->describe())
                                 : fmt::format("{}: {}", label, failed->describe());
      if (!mutated.empty()) reason += fmt::format(" (the kernel also modified input '{}')", mutated);
      return finish(Verdict::wrong_answer, reason);
    }
    if (!mutated.empty()) {
      return finish(Verdict::hack_suspected, fmt::format("{}: outputs match, but the kernel modified its input '{}'", label, mutated));
    }
    if (t == 0) firstOutputs = std::move(got);
    if (rerun) {
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i].byteSize() != firstOutputs[i].byteSize() || std::memcmp(got[i].data(), firstOutputs[i].data(), got[i].byteSize()) != 0) {
          result.nondeterministic = true;
        }
      }
    }
  }
  finish(Verdict::correct, "");
}

}  // namespace cuset
