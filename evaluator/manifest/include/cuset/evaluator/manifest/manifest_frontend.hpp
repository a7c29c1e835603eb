#pragma once
// CuSeT's own candidate form (DESIGN §3, docs/candidate-format.md): CUDA C++ with a `/*@cuset` launch
// manifest, resolved for every size set of the problem into launch plans. It claims whatever no other
// frontend of the run does, so it comes last.
#include "cuset/evaluator/pipeline/candidate_frontend.hpp"

namespace cuset {

class ManifestFrontend final : public CandidateFrontend {
 public:
  std::string_view form() const override { return "manifest"; }
  bool recognises(const Candidate&) const override { return true; }
  std::string_view launcher() const override { return "manifest names"; }
  FrontendPlan plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const override;
};

}  // namespace cuset
