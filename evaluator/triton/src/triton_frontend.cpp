#include "cuset/evaluator/triton/triton_frontend.hpp"

#include "cuset/evaluator/kernelbench/kernelbench_static_check.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"

namespace cuset {

TritonFrontend::TritonFrontend(const KernelBenchTranslator* translator, KernelBenchRunOptions options)
    : options_(options), recorded_(translator, std::move(options)) {}

bool TritonFrontend::recognises(const Candidate& candidate) const {
  if (!isKernelBenchSolution(candidate.source)) return false;
  return kernelBenchBackendLang(options_, candidate.source) == "triton";
}

FrontendPlan TritonFrontend::plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const {
  return recorded_.plan(candidate, problem, r);
}

}  // namespace cuset
