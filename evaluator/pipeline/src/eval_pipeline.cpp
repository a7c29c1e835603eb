// evaluateCandidate: one candidate's stages (problem, manifest, NVRTC, launch resources, backend), and
// the backend names. The run around it is eval_run.cpp's.
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <variant>

#include "cuset/common/error.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/text_excerpt.hpp"
#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/correctness/reference_cache.hpp"
#include "cuset/evaluator/problem/large_sizes.hpp"
#include "cuset/evaluator/sim_backend/sim_backend.hpp"
#include "launch_resources.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

std::string archForDevice(const std::string& computeCapability) {
  const std::size_t dot = computeCapability.find('.');
  if (dot == std::string::npos) return "sm_90";
  const int cc = std::stoi(computeCapability.substr(0, dot)) * 10 + std::stoi(computeCapability.substr(dot + 1));
  const auto archs = NvrtcCompiler::supportedArchs();
  if (std::find(archs.begin(), archs.end(), cc) != archs.end()) return fmt::format("sm_{}", cc);
  // A GPU newer than this NVRTC: PTX for the newest architecture it knows, JIT-compiled by the driver.
  int best = 0;
  for (int a : archs) {
    if (a <= cc) best = std::max(best, a);
  }
  return fmt::format("compute_{}", best ? best : archs.back());
}

int archNumber(std::string_view arch) {
  for (const std::string_view prefix : {"sm_", "compute_"}) {
    if (!arch.starts_with(prefix)) continue;
    arch.remove_prefix(prefix.size());
    if (arch.ends_with('a')) arch.remove_suffix(1);
    int number = 0;
    const auto [end, error] = std::from_chars(arch.data(), arch.data() + arch.size(), number);
    return error == std::errc() && end == arch.data() + arch.size() ? number : 0;
  }
  return 0;
}

std::string archSpecificTarget(const std::string& arch) {
  if (arch.ends_with('a') || archNumber(arch) < 90) return {};
  return arch + "a";
}

std::string_view backendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::compileOnly:
      return "compile-only";
    case BackendKind::sim:
      return "sim";
    case BackendKind::cuda:
      return "cuda";
    case BackendKind::automatic:
      return "auto";
  }
  return "?";
}

std::optional<BackendKind> parseBackend(std::string_view name) {
  for (BackendKind k : {BackendKind::compileOnly, BackendKind::sim, BackendKind::cuda, BackendKind::automatic}) {
    if (backendName(k) == name) return k;
  }
  return std::nullopt;
}

namespace {

// Why NVRTC's output cannot run, as a verdict: nullopt when it can.
// `launcher`: what names the kernels in this form ("manifest names", "the host code launches").
std::optional<std::pair<Verdict, std::string>> compileFailure(const CompileOutput& compiled, const std::string& log, std::string_view launcher) {
  switch (compiled.status) {
    case CompileOutput::Status::compileError:
      return std::pair{Verdict::compile_error, firstErrorLine(log)};
    case CompileOutput::Status::missingKernels: {
      std::string names;
      for (const auto& n : compiled.missingKernels) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", n);
      return std::pair{Verdict::invalid_submission, fmt::format("{} kernel(s) {} that the compiled module does not define as __global__ "
                                                                "(check the name, extern \"C\", or template arguments)",
                                                                launcher, names)};
    }
    case CompileOutput::Status::ok:
      break;
  }
  return std::nullopt;
}

// Trials (and timing, on a GPU) on the run's backend; fills the verdict into `r`.
void runOnBackend(const Problem& problem, const CandidatePlan& plan, const CompileOutput& compiled, const EvalServices& services,
                  const CorrectnessOptions& options, EvalResult& r) {
  const LaunchPlan& launchPlan = plan.plans.at(options.sizeSet);
  if (services.backend == BackendKind::cuda) {
    // The whole candidate, trials and timing, on one device.
    const CudaDevices::Lease gpu = services.cuda->acquire();
    runCudaBackend(problem, launchPlan, compiled, gpu.pool(), *services.references, options, r);
    r.device = gpu.ordinal();
  } else {
    runSimBackend(problem, launchPlan, plan.deviceSource, *services.simCompiler, *services.sandbox, *services.references, options, r);
  }
}

// A kernel the simulator passed at `small` runs one trial at `large`, KernelBench's sizes with the batch
// cut (large_sizes.hpp): a bug only KernelBench's sizes show (a block capped at 1024 threads for a row of
// 4095) fails here as on the GPU, and KernelBench's predicted check with it. What cannot run there (a
// limit, the reference) leaves the verdict as it was, flagged.
void checkAtLargeSizes(const Problem& problem, const CandidatePlan& plan, const EvalServices& services, const CorrectnessOptions& options,
                       EvalResult& r) {
  const auto large = plan.plans.find(std::string(kLargeSizeSet));
  if (services.backend != BackendKind::sim || r.verdict != Verdict::correct || large == plan.plans.end() || options.sizeSet == kLargeSizeSet) {
    return;
  }
  CorrectnessOptions once = options;
  once.sizeSet = std::string(kLargeSizeSet);
  once.trials = 1;
  once.kernelbench = {};
  once.raceCheckCorrect = false;  // checked at `small`; the records would not fit at these sizes
  EvalResult at = r;
  at.kernelbench.reset();
  at.comparisons.clear();
  try {
    runSimBackend(problem, large->second, plan.deviceSource, *services.simCompiler, *services.sandbox, *services.references, once, at);
  } catch (const ReferenceFailure&) {
    r.flags.push_back("large_sizes_not_run:reference");
    return;
  }
  r.timings.runMs += at.timings.runMs;
  if (at.verdict == Verdict::timeout || at.verdict == Verdict::unsupported) {
    r.flags.push_back(fmt::format("large_sizes_not_run:{}", verdictName(at.verdict)));
    return;
  }
  r.sizes.push_back(std::string(kLargeSizeSet));
  if (at.verdict == Verdict::correct) return;
  // The constants addLargeSizeSet cut (the batch), as the recorder overrides them.
  std::vector<std::string> cut;
  const SizeBindings& full = problem.sizes("full");
  for (const auto& [name, value] : problem.origin->sizeOverrides.at(std::string(kLargeSizeSet))) {
    cut.push_back(fmt::format("{} {} of {}", name, value, full.at(name)));
  }
  const std::string where = fmt::format("at sizes 'large' (KernelBench's, but {})", fmt::join(cut, ", "));
  r.verdict = at.verdict;
  r.reason = fmt::format("{}: {}", where, at.reason);
  r.comparisons = std::move(at.comparisons);
  r.trials += at.trials;
  if (r.kernelbench && r.kernelbench->correct && *r.kernelbench->correct) {
    r.kernelbench->correct = false;
    r.kernelbench->issue = "correctness_issue: " + r.reason;
  }
}

EvalResult resultShell(const Candidate& candidate, BackendKind backend) {
  EvalResult r;
  r.problem = candidate.problemId;
  r.sample = candidate.sample;
  r.model = candidate.model;
  r.backend = std::string(backendName(backend));
  r.origin = candidate.origin;
  r.source = candidate.source;
  r.sourceHash = hashString(candidate.source).hex();
  return r;
}

}  // namespace

const CandidateFrontend* frontendFor(const std::vector<const CandidateFrontend*>& frontends, const Candidate& candidate) {
  for (const CandidateFrontend* f : frontends) {
    if (f->recognises(candidate)) return f;
  }
  return nullptr;
}

// The stages in order; evaluateCandidate bounds what it says.
static EvalResult judgeCandidate(const Candidate& candidate, const EvalServices& services) {
  const ProblemSuite& suite = services.suite;
  const auto start = Clock::now();
  EvalResult r = resultShell(candidate, services.backend);
  auto finish = [&](Verdict v, std::string reason) {
    r.verdict = v;
    r.reason = std::move(reason);
    r.timings.totalMs = msSince(start);
    return r;
  };

  if (!candidate.readError.empty()) return finish(Verdict::invalid_submission, candidate.readError);
  const Problem* problem = suite.find(candidate.problemId);
  if (problem == nullptr) {
    return finish(Verdict::invalid_submission, fmt::format("unknown problem id '{}' ({} problems loaded from {})", candidate.problemId,
                                                           suite.problems().size(), suite.root().string()));
  }
  if (services.remote) return services.remote->judge(candidate, *problem, std::move(r));

  const CandidateFrontend* frontend = frontendFor(services.frontends, candidate);
  if (frontend == nullptr) return finish(Verdict::invalid_submission, "no candidate form of this run reads it");
  r.form = std::string(frontend->form());
  const std::unique_ptr<SecondOpinion> opinion =
      services.secondOpinions ? services.secondOpinions->forCandidate(candidate, *problem, r.form) : nullptr;
  FrontendPlan planned;
  auto finishEarly = [&](Verdict v, std::string reason) {
    if (opinion) opinion->withoutTrials(v, reason, r);
    // Nothing ran (compile-only, a problem this backend cannot judge): what the frontend showed stands.
    if (planned.standing && (v == Verdict::compiled || v == Verdict::unsupported)) return finish(planned.standing->verdict, planned.standing->reason);
    return finish(v, std::move(reason));
  };
  planned = frontend->plan(candidate, *problem, r);
  r.timings.manifestMs = msSince(start) - r.timings.translateMs;
  if (!planned.ok()) return finishEarly(planned.early.verdict, std::move(planned.early.reason));
  const CandidatePlan& plan = *planned.plan;
  r.libraryOps = plan.libraryOps();

  // Code for an architecture-specific target (Triton's for Hopper: sm_90a) needs a compiler for that
  // target, cubin (sm_90a) or PTX (compute_90a) as the run compiles.
  const auto serves = [&](const NvrtcCompiler* c) {
    return c && c->options().arch.ends_with('a') && archNumber(c->options().arch) == archNumber(plan.deviceArch);
  };
  const NvrtcCompiler* nvrtc = &services.nvrtc;
  if (!plan.deviceArch.empty() && !serves(nvrtc)) {
    nvrtc = services.nvrtcArchSpecific;
    if (!serves(nvrtc)) {
      return finishEarly(Verdict::unsupported, fmt::format("the candidate's device code is for {} and this run compiles for {}", plan.deviceArch,
                                                           services.nvrtc.options().arch));
    }
  }
  CompileOutput compiled = nvrtc->compile(plan.deviceSource, plan.kernelNames);
  r.timings.compileMs = compiled.milliseconds;
  r.compileCacheHit = compiled.cacheHit;
  const auto failure = compileFailure(compiled, compiled.log, frontend->launcher());
  r.compileLog += std::move(compiled.log);
  if (failure) return finishEarly(failure->first, failure->second);
  if (auto refused = refusedLaunch(plan.plans, compiled.resources, services.correctness.sizeSet))
    return finishEarly(refused->verdict, std::move(refused->reason));
  if (services.backend == BackendKind::compileOnly) return finishEarly(Verdict::compiled, "");
  if (services.unjudgeable) {
    if (auto it = services.unjudgeable->find(problem->id); it != services.unjudgeable->end()) return finishEarly(Verdict::unsupported, it->second);
  }
  try {
    CorrectnessOptions options = services.correctness;
    if (opinion) opinion->configureTrials(options);
    runOnBackend(*problem, plan, compiled, services, options, r);
    if (r.verdict == Verdict::correct || r.trials > 0) r.sizes = {options.sizeSet};
    checkAtLargeSizes(*problem, plan, services, options, r);
    if (opinion) opinion->afterBackend(r);
    if (const auto& standing = planned.standing) {
      // The frontend showed it (a recorded library step writes an input): the trials ran for the second opinion.
      const bool told = r.verdict == Verdict::correct || r.verdict == standing->verdict;
      const std::string trials = told ? "" : fmt::format(" (its trials: {}: {})", verdictName(r.verdict), r.reason);
      r.verdict = standing->verdict;
      r.reason = standing->reason + trials;
    }
    // What the second opinion concludes once CuSeT's verdict is final (a standing verdict included: a
    // race between streams KernelBench's check passes is CuSeT's own check).
    if (opinion) opinion->conclude(planned, r);
  } catch (const ReferenceFailure& e) {
    // A reference that fails on these inputs (the check at the start passed it on others): the
    // problem's candidates cannot be judged, the rest of the run can.
    return finishEarly(Verdict::unsupported, std::string("this problem's reference failed, so the kernel cannot be judged: ") + e.what());
  } catch (const std::exception& e) {
    // A harness failure (the host compiler missing, a full disk) is not the candidate's fault: it
    // stops the run with the reason rather than recording a verdict.
    throw makeError("{} sample {} ({}): {}", candidate.problemId, candidate.sample, candidate.origin, e.what());
  }
  r.timings.totalMs = msSince(start);
  return r;
}

// Reasons and logs quote the candidate (a compiler echoes the offending line back): excerpts, never whole.
constexpr std::size_t kReasonBytes = 4096, kLogLineBytes = 1024, kLogBytes = 64 * 1024;

EvalResult evaluateCandidate(const Candidate& candidate, const EvalServices& services) {
  EvalResult r = judgeCandidate(candidate, services);
  r.reason = excerptLines(r.reason, kReasonBytes, kReasonBytes);
  r.compileLog = excerptLines(r.compileLog, kLogLineBytes, kLogBytes);
  return r;
}

}  // namespace cuset
