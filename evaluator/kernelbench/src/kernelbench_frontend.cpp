#include "cuset/evaluator/kernelbench/kernelbench_frontend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_static_check.hpp"
#include "cuset/evaluator/sim_backend/sim_backend.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"

namespace cuset {
namespace {

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

class KernelBenchCheckOpinion final : public SecondOpinion {
 public:
  KernelBenchCheckOpinion(const KernelBenchRunOptions& options, const std::string& arch) : options_(options), arch_(arch) {}

  void configureTrials(CorrectnessOptions& options) const override {
    options.kernelbench = {.trials = options_.checkTrials, .tolerance = kernelBenchTolerance(options_), .gpu = kernelBenchGpu(options_, arch_)};
  }

  void withoutTrials(Verdict verdict, const std::string& reason, EvalResult& r) const override {
    r.kernelbench = kernelBenchCheckBeforeTrials(verdict, reason);
  }

  void afterBackend(EvalResult& r) const override {
    // The backend's own refusals before any trial (the simulator's host build) come back without one.
    if (!r.kernelbench) r.kernelbench = kernelBenchCheckBeforeTrials(r.verdict, r.reason);
  }

  void conclude(const FrontendPlan& plan, EvalResult& r) const override {
    if (!r.kernelbench) return;
    const bool constructionDecides = predictConstructionFailure(plan.construction, *r.kernelbench);
    r.kernelbench->disagreement = constructionDecides && r.verdict == Verdict::correct ? "initialisation" : kernelBenchDisagreement(r);
  }

 private:
  const KernelBenchRunOptions& options_;
  const std::string& arch_;
};

}  // namespace

std::string kernelBenchBackendLang(const KernelBenchRunOptions& options, std::string_view source) {
  if (options.backendLang != "auto") return options.backendLang;
  return hasTritonKernel(source) ? "triton" : "cuda";
}

std::optional<std::string> recordKernelBenchStaticFindings(const Candidate& candidate, const KernelBenchRunOptions& kb, EvalResult& r) {
  std::string strict;
  for (auto& f : kernelBenchStaticFindings(candidate.source, kb.precision, kernelBenchBackendLang(kb, candidate.source))) {
    if (f.strict) strict += fmt::format("{}{} ({})", strict.empty() ? "" : "; ", f.message, f.check);
    r.staticFindings.push_back({std::move(f.check), std::move(f.message), f.strict});
  }
  if (kb.staticChecks != "strict" || strict.empty()) return std::nullopt;
  return "KernelBench's static checker rejects it (--kernelbench-static strict): " + strict;
}

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

KernelBenchFrontend::KernelBenchFrontend(const KernelBenchTranslator* translator, KernelBenchRunOptions options)
    : translator_(translator), options_(std::move(options)) {}

bool KernelBenchFrontend::recognises(const Candidate& candidate) const { return isKernelBenchSolution(candidate.source); }

FrontendPlan KernelBenchFrontend::plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const {
  FrontendPlan out;
  if (auto refused = recordKernelBenchStaticFindings(candidate, options_, r)) {
    out.early = {Verdict::invalid_submission, std::move(*refused)};
    return out;
  }
  if (!translator_) {
    out.early = {Verdict::unsupported, "KernelBench solutions are not translated in this run"};
    return out;
  }
  Translation t = translator_->translate(problem, candidate.source);
  r.timings.translateMs = t.milliseconds;
  if (!t.log.empty()) r.compileLog = "--- translation ---\n" + t.log;
  if (!t.ok()) {
    // A translation ends in a plan or in a failure: never in a verdict that only trials may give.
    if (isSuccess(*t.verdict)) {
      out.early = {Verdict::invalid_submission, fmt::format("the translation reported '{}' without running anything", verdictName(*t.verdict))};
    } else {
      out.early = {*t.verdict, t.reason};
    }
    return out;
  }
  if (t.standing) out.standing = EarlyVerdict{t.standing->verdict, t.standing->reason};
  out.construction = std::move(t.construction);
  for (const auto& c : out.construction) r.flags.push_back("initialisation_differs:" + c.parameter);
  out.plan = std::move(t.plan);
  return out;
}

KernelBenchCheckSource::KernelBenchCheckSource(KernelBenchRunOptions options, std::string arch)
    : options_(std::move(options)), arch_(std::move(arch)) {}

std::unique_ptr<SecondOpinion> KernelBenchCheckSource::forCandidate(const Candidate&, const Problem& problem, std::string_view form) const {
  const bool imported = problem.origin && problem.origin->suite == "kernelbench";
  const bool wanted = options_.check == "always" || (options_.check == "auto" && (form == "kernelbench" || imported));
  return wanted ? std::make_unique<KernelBenchCheckOpinion>(options_, arch_) : nullptr;
}

}  // namespace cuset
