#pragma once
// The Triton form as the pipeline sees it (candidate_frontend.hpp): a KernelBench solution whose
// ModelNew launches @triton.jit / @triton.autotune kernels (KernelBench's backend="triton", KernelGYM's
// "backend": "triton"). Recognised, and checked by KernelBench's static checker with its Triton rules;
// its launches are not yet made into a launch plan (docs/candidate-format.md "The Triton form"), so
// such a candidate is `unsupported`, saying so, and never run: a Triton kernel is not judged hostile
// for what Triton's own start-up does.
#include "cuset/evaluator/kernelbench/kernelbench_options.hpp"
#include "cuset/evaluator/pipeline/candidate_frontend.hpp"

namespace cuset {

class TritonFrontend final : public CandidateFrontend {
 public:
  explicit TritonFrontend(KernelBenchRunOptions options);
  std::string_view form() const override { return "triton"; }
  // A ModelNew file with a Triton kernel, or any ModelNew file when the run says its solutions are
  // Triton (--backend-lang triton). Asked before KernelBench's CUDA form.
  bool recognises(const Candidate& candidate) const override;
  std::string_view launcher() const override { return "the Triton launches"; }
  FrontendPlan plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const override;

 private:
  KernelBenchRunOptions options_;
};

}  // namespace cuset
