#include "cuset/evaluator/triton/triton_frontend.hpp"

#include "cuset/evaluator/kernelbench/kernelbench_frontend.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_static_check.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"

namespace cuset {

TritonFrontend::TritonFrontend(KernelBenchRunOptions options) : options_(std::move(options)) {}

bool TritonFrontend::recognises(const Candidate& candidate) const {
  if (!isKernelBenchSolution(candidate.source)) return false;
  return kernelBenchBackendLang(options_, candidate.source) == "triton";
}

FrontendPlan TritonFrontend::plan(const Candidate& candidate, const Problem&, EvalResult& r) const {
  FrontendPlan out;
  if (auto refused = recordKernelBenchStaticFindings(candidate, options_, r)) {
    out.early = {Verdict::invalid_submission, std::move(*refused)};
    return out;
  }
  // Not run at all rather than run in part: the recorder would execute Triton's start-up (which probes
  // the machine with a subprocess, a sandbox violation there), and no backend executes a Triton launch
  // yet. `unsupported` is never the candidate's fault and is reported apart from failures.
  out.early = {Verdict::unsupported,
               "a Triton solution (@triton.jit kernels): recognised and statically checked, but this CuSeT does not run Triton launches yet "
               "(their launch plan and the simulator's PTX path are being built: docs/candidate-format.md, \"The Triton form\")"};
  return out;
}

}  // namespace cuset
