#pragma once
// KernelBench as the pipeline sees it (candidate_frontend.hpp): its solution form (ModelNew +
// load_inline) made into launch plans by the translator, and its own check (eval_kernel_against_ref)
// reproduced beside CuSeT's verdict as a second opinion, for its solutions and for every candidate of a
// problem imported from KernelBench (docs/kernelbench.md).
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cuset/evaluator/kernelbench/kernelbench_options.hpp"
#include "cuset/evaluator/pipeline/candidate_frontend.hpp"

namespace cuset {

class KernelBenchTranslator;

class KernelBenchFrontend final : public CandidateFrontend {
 public:
  // `translator` null: KernelBench solutions are `unsupported` in this run (compile-only tools).
  KernelBenchFrontend(const KernelBenchTranslator* translator, KernelBenchRunOptions options);
  std::string_view form() const override { return "kernelbench"; }
  bool recognises(const Candidate& candidate) const override;
  std::string_view launcher() const override { return "the host code launches"; }
  // KernelBench's static checker (its findings recorded; with --kernelbench-static strict, its strict
  // findings stop the candidate), then the translation.
  FrontendPlan plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const override;

 private:
  const KernelBenchTranslator* translator_;
  KernelBenchRunOptions options_;
};

// KernelBench's check, for the candidates `options.check` names, on a run whose NVRTC target is `arch`
// (the GPU class whose numerics it predicts by default).
class KernelBenchCheckSource final : public SecondOpinionSource {
 public:
  KernelBenchCheckSource(KernelBenchRunOptions options, std::string arch);
  std::unique_ptr<SecondOpinion> forCandidate(const Candidate& candidate, const Problem& problem, std::string_view form) const override;

 private:
  KernelBenchRunOptions options_;
  std::string arch_;
};

// KernelBench's `backend` option for a solution: the run's --backend-lang, or with "auto" "triton"
// where the source defines a Triton kernel and "cuda" otherwise.
std::string kernelBenchBackendLang(const KernelBenchRunOptions& options, std::string_view source);

// KernelBench's static checker on a solution, with the rules of its backend: its findings recorded in
// `r`; the reason to refuse it when its strict findings count (--kernelbench-static strict).
std::optional<std::string> recordKernelBenchStaticFindings(const Candidate& candidate, const KernelBenchRunOptions& options, EvalResult& r);

// Why KernelBench's reproduced check and CuSeT's verdict differ on `result`, or "" where they agree or
// KernelBench's was not reproduced (docs/kernelbench.md "Why the two verdicts differ").
std::string kernelBenchDisagreement(const EvalResult& result);

}  // namespace cuset
