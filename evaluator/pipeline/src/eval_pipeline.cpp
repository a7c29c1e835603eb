// evaluateCandidate: one candidate's stages (problem, manifest, NVRTC, launch resources, backend), and
// the backend names. The run around it is eval_run.cpp's.
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <variant>

#include "cuset/common/error.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/text_excerpt.hpp"
#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/candidate/kernelbench_static_check.hpp"
#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/candidate/plan_validator.hpp"
#include "cuset/evaluator/candidate/source_policy.hpp"
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
std::optional<std::pair<Verdict, std::string>> compileFailure(const CompileOutput& compiled, const std::string& log, const std::string& form) {
  switch (compiled.status) {
    case CompileOutput::Status::compileError:
      return std::pair{Verdict::compile_error, firstErrorLine(log)};
    case CompileOutput::Status::missingKernels: {
      std::string names;
      for (const auto& n : compiled.missingKernels) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", n);
      return std::pair{Verdict::invalid_submission, fmt::format("{} kernel(s) {} that the compiled module does not define as __global__ "
                                                                "(check the name, extern \"C\", or template arguments)",
                                                                form == "kernelbench" ? "the host code launches" : "manifest names", names)};
    }
    case CompileOutput::Status::ok:
      break;
  }
  return std::nullopt;
}

// A verdict reached before anything runs.
struct EarlyVerdict {
  Verdict verdict;
  std::string reason;
};

// A `/*@cuset` candidate: its manifest resolved for every size set.
std::variant<CandidatePlan, EarlyVerdict> planFromManifestCandidate(const Candidate& candidate, const Problem& problem) {
  auto manifest = parseLaunchManifest(candidate.source, problem);
  if (!manifest) return EarlyVerdict{Verdict::invalid_submission, manifest.error()};
  if (auto include = disallowedInclude(candidate.source)) return EarlyVerdict{Verdict::invalid_submission, *include};
  CandidatePlan plan{"manifest", candidate.source, manifest->kernelNames(), {}};
  for (const auto& set : problem.sizeSets) {
    auto p = planFromManifest(*manifest, set.sizes);
    if (!p) return EarlyVerdict{Verdict::invalid_submission, fmt::format("manifest: with sizes '{}': {}", set.name, p.error())};
    if (auto v = validatePlan(*p, problemBuffers(problem, set.sizes))) {
      return EarlyVerdict{Verdict::invalid_submission, fmt::format("manifest: with sizes '{}': {}", set.name, v->message)};
    }
    plan.plans[set.name] = std::move(*p);
  }
  return plan;
}

// A KernelBench solution: its Python and host code recorded, in the restricted helper, into plans.
std::variant<CandidatePlan, EarlyVerdict> planFromKernelBenchCandidate(const Candidate& candidate, const Problem& problem,
                                                                       const EvalServices& services, EvalResult& r,
                                                                       std::optional<EarlyVerdict>& standing,
                                                                       std::vector<ConstructionDifference>& construction) {
  if (!services.translator) return EarlyVerdict{Verdict::unsupported, "KernelBench solutions are not translated in this run"};
  Translation t = services.translator->translate(problem, candidate.source);
  r.timings.translateMs = t.milliseconds;
  if (!t.log.empty()) r.compileLog = "--- translation ---\n" + t.log;
  if (!t.ok()) {
    // A translation ends in a plan or in a failure: never in a verdict that only trials may give.
    if (isSuccess(*t.verdict)) {
      return EarlyVerdict{Verdict::invalid_submission,
                          fmt::format("the translation reported '{}' without running anything", verdictName(*t.verdict))};
    }
    return EarlyVerdict{*t.verdict, t.reason};
  }
  if (t.standing) standing = EarlyVerdict{t.standing->verdict, t.standing->reason};
  construction = std::move(t.construction);
  for (const auto& c : construction) r.flags.push_back("initialisation_differs:" + c.parameter);
  return std::move(t.plan);
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

// KernelBench's conclusion for a candidate that never reached the trials: a build that fails fails
// there too (compiled: false), an exception in __init__ or forward is its runtime error; what stopped it
// here for CuSeT's own reasons (the sandbox, a limit, the simulator) cannot tell what KernelBench would say.
KernelBenchCheck kernelBenchCheckBeforeTrials(Verdict verdict, const std::string& reason) {
  switch (verdict) {
    case Verdict::compile_error:
      return {.compiled = false, .correct = false, .issue = "compilation_error: " + reason};
    case Verdict::runtime_error:
    case Verdict::wrong_answer:
      return {.compiled = true, .correct = false, .issue = "runtime_error: " + reason};
    default:
      return {.compiled = verdict != Verdict::invalid_submission,
              .issue = "not reproduced: " + (reason.empty() ? "nothing was run (compile-only backend)" : reason)};
  }
}

// KernelBench's check runs ModelNew as its own __init__ left it, against Model as its own left it: a
// parameter the plan reads that starts elsewhere fails there whatever the kernels do. Predicted from the
// two constructions (kb_construction.py), not run: the trials bind both models to the same weights.
// Returns whether it decided the prediction.
bool predictConstructionFailure(const std::vector<ConstructionDifference>& construction, KernelBenchCheck& k) {
  if (construction.empty() || !k.correct || !*k.correct) return false;
  std::vector<std::string> which;
  for (const auto& c : construction) which.push_back(fmt::format("'{}' ({})", c.parameter, c.how));
  k.correct = false;
  k.issue =
      fmt::format("correctness_issue: KernelBench's construction starts ModelNew's parameters elsewhere than Model's: {}", fmt::join(which, "; "));
  return true;
}

// KernelBench's tolerance for its precision option (eval.py's get_tolerance_for_precision; v0.1's 1e-2
// for float32 where the user's KernelBench has it).
Tolerance kernelBenchTolerance(const KernelBenchRunOptions& kb) {
  return kb.precision == "fp32" ? Tolerance{kb.float32Tolerance, kb.float32Tolerance} : Tolerance{1e-2, 1e-2};
}

// KernelBench's static checker on a KernelBench solution; the reason to refuse it when its strict
// findings count (--kernelbench-static strict).
std::optional<std::string> recordStaticFindings(const Candidate& candidate, const KernelBenchRunOptions& kb, EvalResult& r) {
  std::string strict;
  for (auto& f : kernelBenchStaticFindings(candidate.source, kb.precision)) {
    if (f.strict) strict += fmt::format("{}{} ({})", strict.empty() ? "" : "; ", f.message, f.check);
    r.staticFindings.push_back({std::move(f.check), std::move(f.message), f.strict});
  }
  if (kb.staticChecks != "strict" || strict.empty()) return std::nullopt;
  return "KernelBench's static checker rejects it (--kernelbench-static strict): " + strict;
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

GpuClass kernelBenchGpu(const KernelBenchRunOptions& options, const std::string& arch) {
  if (options.gpu == "auto") return gpuClassOfArch(arch.empty() ? "sm_90" : arch);
  if (auto gpu = parseGpuClass(options.gpu)) return *gpu;
  throw makeError("--kernelbench-gpu '{}': expected auto, none, volta, turing, ampere, ada, hopper or blackwell", options.gpu);
}

std::string kernelBenchDisagreement(const EvalResult& r) {
  if (!r.kernelbench || !r.kernelbench->correct) return {};
  const KernelBenchCheck& k = *r.kernelbench;
  const bool cuset = r.verdict == Verdict::correct;
  if (*k.correct == cuset) return {};
  // The GPU's TF32 convolutions decide it: against the exact reference the same trials agree with CuSeT.
  if (k.correctAgainstExact && *k.correctAgainstExact == cuset) return "tf32_reference";
  // A race between threads of a block that lockstep execution, as a GPU's warps run, hides.
  if (*k.correct && r.verdict == Verdict::runtime_error && namesSharedMemoryRace(r.reason)) {
    return "race_hidden_by_lockstep";
  }
  if (*k.correct) {
    // KernelBench passes what CuSeT's own checks stop: fences and guard bands, canaries, input mutation,
    // shared-memory poison, reversed thread order, the determinism rerun, the sandbox.
    return "cuset_checks";
  }
  // CuSeT passes what KernelBench's trials fail: its tolerance and seeded inputs, or memory it leaves zero.
  return "kernelbench_trials";
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

  static const KernelBenchRunOptions kDefaults;
  const KernelBenchRunOptions& kb = services.kernelbench ? *services.kernelbench : kDefaults;
  r.form = isKernelBenchSolution(candidate.source) ? "kernelbench" : "manifest";
  const bool kernelBenchCheck =
      kb.check == "always" || (kb.check == "auto" && (r.form == "kernelbench" || (problem->origin && problem->origin->suite == "kernelbench")));
  std::optional<EarlyVerdict> standing;  // the verdict the plan gets whatever its trials show
  std::vector<ConstructionDifference> construction;
  auto finishEarly = [&](Verdict v, std::string reason) {
    if (kernelBenchCheck) r.kernelbench = kernelBenchCheckBeforeTrials(v, reason);
    // Nothing ran (compile-only, a problem this backend cannot judge): what the recording showed stands.
    if (standing && (v == Verdict::compiled || v == Verdict::unsupported)) return finish(standing->verdict, standing->reason);
    return finish(v, std::move(reason));
  };
  if (r.form == "kernelbench") {
    if (auto refused = recordStaticFindings(candidate, kb, r)) return finishEarly(Verdict::invalid_submission, std::move(*refused));
  }
  auto planned = r.form == "kernelbench" ? planFromKernelBenchCandidate(candidate, *problem, services, r, standing, construction)
                                         : planFromManifestCandidate(candidate, *problem);
  r.timings.manifestMs = msSince(start) - r.timings.translateMs;
  if (auto* early = std::get_if<EarlyVerdict>(&planned)) return finishEarly(early->verdict, std::move(early->reason));
  const CandidatePlan& plan = std::get<CandidatePlan>(planned);
  r.libraryOps = plan.libraryOps();

  CompileOutput compiled = services.nvrtc.compile(plan.deviceSource, plan.kernelNames);
  r.timings.compileMs = compiled.milliseconds;
  r.compileCacheHit = compiled.cacheHit;
  const auto failure = compileFailure(compiled, compiled.log, r.form);
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
    if (kernelBenchCheck) {
      options.kernelbench = {.trials = kb.checkTrials, .tolerance = kernelBenchTolerance(kb), .gpu = kernelBenchGpu(kb, services.arch)};
    }
    runOnBackend(*problem, plan, compiled, services, options, r);
    if (r.verdict == Verdict::correct || r.trials > 0) r.sizes = {options.sizeSet};
    checkAtLargeSizes(*problem, plan, services, options, r);
    // The backend's own refusals before any trial (the simulator's host build) come back without one.
    if (kernelBenchCheck && !r.kernelbench) r.kernelbench = kernelBenchCheckBeforeTrials(r.verdict, r.reason);
    if (standing) {
      // The recording showed it (a library step writes an input): the trials ran for KernelBench's check.
      const bool told = r.verdict == Verdict::correct || r.verdict == standing->verdict;
      const std::string trials = told ? "" : fmt::format(" (its trials: {}: {})", verdictName(r.verdict), r.reason);
      r.verdict = standing->verdict;
      r.reason = standing->reason + trials;
    }
    // Why the two verdicts differ, once CuSeT's is final (a standing verdict included: a race between
    // streams KernelBench's check passes is CuSeT's own check).
    if (r.kernelbench) {
      const bool construction_decides = predictConstructionFailure(construction, *r.kernelbench);
      r.kernelbench->disagreement = construction_decides && r.verdict == Verdict::correct ? "initialisation" : kernelBenchDisagreement(r);
    }
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
