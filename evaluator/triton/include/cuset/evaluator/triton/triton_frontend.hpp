#pragma once
// The Triton form as the pipeline sees it (candidate_frontend.hpp): a KernelBench solution whose
// ModelNew launches @triton.jit / @triton.autotune kernels (KernelBench's backend="triton", KernelGYM's
// "backend": "triton"). Checked by KernelBench's static checker with its Triton rules, then recorded
// by KernelBench's translator, whose recorder compiles each Triton launch to PTX for sm_80 and makes it
// a kernel step (kb_triton.py): the device code is Triton's own PTX, run by NVRTC and the simulator as
// every other kernel (docs/candidate-format.md "The Triton form").
#include "cuset/evaluator/kernelbench/kernelbench_frontend.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_options.hpp"
#include "cuset/evaluator/pipeline/candidate_frontend.hpp"

namespace cuset {

class TritonFrontend final : public CandidateFrontend {
 public:
  // `translator` null: Triton solutions are `unsupported` in this run, as KernelBench's are.
  TritonFrontend(const KernelBenchTranslator* translator, KernelBenchRunOptions options);
  std::string_view form() const override { return "triton"; }
  // A ModelNew file with a Triton kernel, or any ModelNew file when the run says its solutions are
  // Triton (--backend-lang triton). Asked before KernelBench's CUDA form.
  bool recognises(const Candidate& candidate) const override;
  std::string_view launcher() const override { return "the Triton launches"; }
  FrontendPlan plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const override;

 private:
  KernelBenchRunOptions options_;
  KernelBenchFrontend recorded_;  // the same static check and translation; the recorder tells the forms apart
};

}  // namespace cuset
