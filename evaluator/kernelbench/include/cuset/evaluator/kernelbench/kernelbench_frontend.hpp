#pragma once
// KernelBench as the pipeline sees it (candidate_frontend.hpp): its solution form (ModelNew +
// load_inline) made into launch plans by the translator, and its own check (eval_kernel_against_ref)
// reproduced beside CuSeT's verdict as a second opinion, for its solutions and for every candidate of a
// problem imported from KernelBench (docs/kernelbench.md).
#include <memory>
#include <string>

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

// Why KernelBench's reproduced check and CuSeT's verdict differ on `result`, or "" where they agree or
// KernelBench's was not reproduced (docs/kernelbench.md "Why the two verdicts differ").
std::string kernelBenchDisagreement(const EvalResult& result);

}  // namespace cuset
