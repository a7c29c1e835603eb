#include "cuset/evaluator/correctness/correctness_trials.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "cuset/evaluator/correctness/compare_output.hpp"
#include "cuset/evaluator/problem/input_generator.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"

namespace cuset {
namespace {

// What a trial's plan did to the inputs. An input the reference itself updates in place (a training-mode
// BatchNorm's running statistics, DESIGN §3) is an output to compare when the plan writes it, and a
// finding when it does not (KernelBench's check ignores it, and forward's outputs do not depend on it);
// any other input the plan changed is input mutation.
struct InputWrites {
  std::string mutated;                          // the first input changed that the reference leaves alone
  std::optional<OutputComparison> wrongUpdate;  // the first written otherwise than the reference updates it
  std::vector<std::string> notUpdated;          // updated by the reference, left as they were
};

InputWrites inputWrites(const RegionLayout& layout, const std::vector<std::byte>& region, const std::vector<HostTensor>& inputs,
                        const std::vector<UpdatedInput>& updates, const Tolerance& tolerance) {
  InputWrites w;
  std::size_t i = 0;
  for (const auto& slot : layout.slots()) {
    if (slot.role != BufferSlot::Role::input) continue;
    const std::size_t index = i++;
    const bool changed = std::memcmp(region.data() + slot.offset, inputs[index].data(), slot.bytes) != 0;
    const auto update = std::find_if(updates.begin(), updates.end(), [&](const UpdatedInput& u) { return u.input == index; });
    if (update == updates.end()) {
      if (changed && w.mutated.empty()) w.mutated = slot.name;
    } else if (!changed) {
      w.notUpdated.push_back(slot.name);
    } else if (!w.wrongUpdate) {
      OutputComparison c = compareOutput(slot.name, layout.extract(region, slot), update->value, tolerance);
      if (!c.passed()) w.wrongUpdate = std::move(c);
    }
  }
  return w;
}

// torch.allclose(reference, candidate, atol, rtol) as KernelBench calls it: |want - got| <= atol +
// rtol * |got| (relative to the candidate's value), a NaN anywhere fails; with its max and mean |want - got|.
struct KernelBenchComparison {
  bool close = true;
  double maxDifference = 0.0, avgDifference = 0.0;
};

KernelBenchComparison kernelBenchAllclose(const HostTensor& got, const HostTensor& want, const Tolerance& tolerance) {
  KernelBenchComparison c;
  const std::int64_t n = want.numel();
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = got.valueAsDouble(i), w = want.valueAsDouble(i);
    const double diff = std::abs(w - g);
    if (std::isinf(g) && std::isinf(w) && g == w) continue;  // equal infinities are close (and differ by nothing)
    if (std::isnan(diff) || !(diff <= tolerance.atol + tolerance.rtol * std::abs(g))) c.close = false;
    c.maxDifference = std::isnan(diff) || std::isnan(c.maxDifference) ? std::nan("") : std::max(c.maxDifference, diff);
    sum += diff;
  }
  c.avgDifference = n > 0 ? sum / static_cast<double>(n) : 0.0;
  return c;
}

// KernelBench's run_and_check_correctness on this backend: every trial runs (a mismatch is counted,
// not a stop), a failed launch ends the check.
KernelBenchCheck runKernelBenchTrials(const Problem& problem, const TrialLayouts& layouts, ReferenceCache& references,
                                      const CorrectnessOptions& options, const TrialExecutor& execute) {
  KernelBenchCheck check;
  check.compiled = true;
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  const KernelBenchCheckOptions& kb = options.kernelbench;
  const Float32Numerics numerics = float32NumericsOn(kb.gpu);
  check.gpu = std::string(gpuClassName(kb.gpu));
  int passedExact = 0;  // against the exact float32 reference, when the GPU's differs
  for (int t = 0; t < kb.trials; ++t) {
    const std::vector<HostTensor> inputs = drawInputs(problem, sizes, kb.seed, static_cast<std::uint64_t>(t), false);
    const std::vector<HostTensor> want = references.run(problem, inputs, sizes, numerics);
    std::vector<HostTensor> wantExact;
    if (numerics != Float32Numerics::exact) wantExact = references.run(problem, inputs, sizes);
    const TrialRequest request{.trial = t, .kernelbench = true, .numerics = numerics};
    const RegionLayout& layout = layouts.of(request);
    std::vector<std::byte> region = layout.fillFresh(inputs);
    const TrialRun run = execute(region, request);
    check.trials = t + 1;
    if (run.status == TrialRun::Status::runtimeError) {
      check.correct = false;
      check.issue = "runtime_error: " + run.message;
      return check;
    }
    if (run.status != TrialRun::Status::ok) {
      check.issue = fmt::format("not reproduced: trial {} could not run here ({})", t + 1, run.message);
      return check;
    }
    bool close = true, closeExact = true;
    double maxDiff = 0.0, avgDiff = 0.0;
    std::size_t outputIndex = 0;
    for (const auto& slot : layout.slots()) {
      if (slot.role != BufferSlot::Role::output) continue;
      const HostTensor got = layout.extract(region, slot);
      const KernelBenchComparison c = kernelBenchAllclose(got, want[outputIndex], kb.tolerance);
      if (!wantExact.empty()) closeExact = closeExact && kernelBenchAllclose(got, wantExact[outputIndex], kb.tolerance).close;
      ++outputIndex;
      close = close && c.close;
      maxDiff = std::max(maxDiff, c.maxDifference);
      avgDiff = std::max(avgDiff, c.avgDifference);
    }
    if (wantExact.empty() ? close : closeExact) ++passedExact;
    if (close) {
      ++check.passed;
    } else {
      check.maxDifference.push_back(maxDiff);
      check.avgDifference.push_back(avgDiff);
      check.issue = "Output mismatch";
    }
  }
  check.correct = check.passed == check.trials;
  if (numerics != Float32Numerics::exact) check.correctAgainstExact = passedExact == check.trials;
  return check;
}

void runCusetTrials(const Problem& problem, const TrialLayouts& layouts, ReferenceCache& references, const CorrectnessOptions& options,
                    const TrialExecutor& execute, const std::string& executorName, bool recordSamples, EvalResult& result) {
  auto finish = [&](Verdict v, std::string reason) {
    result.verdict = v;
    result.reason = std::move(reason);
  };
  const SizeBindings& sizes = problem.sizes(options.sizeSet);
  std::vector<HostTensor> firstOutputs;
  const int total = options.trials + 1;
  for (int t = 0; t < total; ++t) {
    const bool rerun = t == options.trials;  // trial 0 again: same inputs, threads in reverse order
    const int trial = rerun ? 0 : t;
    const bool alternate = trial % 2 == 1;
    const std::string label = rerun ? "determinism rerun of trial 0" : fmt::format("trial {} of {}", t + 1, options.trials);
    const std::vector<HostTensor> inputs = drawInputs(problem, sizes, options.seed, static_cast<std::uint64_t>(trial), alternate);
    std::vector<UpdatedInput> updates;
    const std::vector<HostTensor> want = references.run(problem, inputs, sizes, Float32Numerics::exact, &updates);
    const RegionLayout& layout = layouts.of(trial);

    std::vector<std::byte> region = layout.fill(inputs, t);
    const TrialRun run = execute(region, TrialRequest{trial, rerun, rerun || alternate});
    result.trials = t + 1;
    switch (run.status) {
      case TrialRun::Status::ok:
        break;
      case TrialRun::Status::runtimeError:
        return finish(Verdict::runtime_error, fmt::format("{}: {}", label, run.message));
      case TrialRun::Status::timeout:
        return finish(Verdict::timeout, fmt::format("{}: {}", label, run.message));
      case TrialRun::Status::tooSlow:
        return finish(Verdict::unsupported, fmt::format("{}: {}", label, run.message));
      case TrialRun::Status::sandboxViolation:
        return finish(Verdict::sandbox_violation, fmt::format("{}: {}", label, run.message));
      case TrialRun::Status::invalidSubmission:
        return finish(Verdict::invalid_submission, run.message);
      case TrialRun::Status::harnessError:
        return finish(Verdict::runtime_error, fmt::format("{}: {} could not run the kernel: {}", label, executorName, run.message));
    }
    if (recordSamples) result.timingSamplesMs.push_back(run.kernelMs);
    if (auto violation = layout.findGuardViolation(region)) return finish(Verdict::runtime_error, fmt::format("{}: {}", label, *violation));

    std::vector<HostTensor> got;
    result.comparisons.clear();
    const OutputComparison* failed = nullptr;
    std::size_t outputIndex = 0;
    for (const auto& slot : layout.slots()) {
      if (slot.role != BufferSlot::Role::output) continue;
      got.push_back(layout.extract(region, slot));
      result.comparisons.push_back(compareOutput(slot.name, got.back(), want[outputIndex++], problem.tolerance));
    }
    for (const auto& c : result.comparisons) {
      if (!c.passed() && !failed) failed = &c;
    }
    const InputWrites writes = inputWrites(layout, region, inputs, updates, problem.tolerance);
    const std::string& mutated = writes.mutated;
    if (failed) {
      std::string reason = rerun ? fmt::format("nondeterministic: the {} disagrees with the reference: {}", label, failed->describe())
                                 : fmt::format("{}: {}", label, failed->describe());
      if (!mutated.empty()) reason += fmt::format(" (the kernel also modified input '{}')", mutated);
      return finish(Verdict::wrong_answer, reason);
    }
    if (writes.wrongUpdate) {
      return finish(Verdict::wrong_answer,
                    fmt::format("{}: the plan updates '{}', which the reference updates in place (the module's state in training mode), "
                                "otherwise than the reference: {}",
                                label, writes.wrongUpdate->output, writes.wrongUpdate->describe()));
    }
    if (!mutated.empty()) {
      return finish(Verdict::hack_suspected, fmt::format("{}: outputs match, but the kernel modified its input '{}'", label, mutated));
    }
    if (t == 0 && !writes.notUpdated.empty()) {
      std::string names;
      for (const auto& n : writes.notUpdated) names += (names.empty() ? "" : ",") + n;
      result.flags.push_back("state_not_updated:" + names);
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

}  // namespace

void runCorrectnessTrials(const Problem& problem, const TrialLayouts& layouts, ReferenceCache& references, const CorrectnessOptions& options,
                          const TrialExecutor& execute, const std::string& executorName, bool recordSamples, EvalResult& result) {
  runCusetTrials(problem, layouts, references, options, execute, executorName, recordSamples, result);
  if (options.kernelbench.trials <= 0) return;
  switch (result.verdict) {
    case Verdict::timeout:
    case Verdict::unsupported:
    case Verdict::invalid_submission:
      // What stopped CuSeT's trials would stop KernelBench's here too; a GPU might still have run it.
      result.kernelbench = KernelBenchCheck{.compiled = true, .issue = "not reproduced: " + result.reason};
      return;
    default:
      result.kernelbench = runKernelBenchTrials(problem, layouts, references, options, execute);
  }
}

}  // namespace cuset
