#include "cuset/evaluator/manifest/manifest_frontend.hpp"

#include <fmt/format.h>

#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/candidate/plan_validator.hpp"
#include "cuset/evaluator/candidate/source_policy.hpp"

namespace cuset {

FrontendPlan ManifestFrontend::plan(const Candidate& candidate, const Problem& problem, EvalResult&) const {
  FrontendPlan out;
  auto refuse = [&](std::string reason) {
    out.early = {Verdict::invalid_submission, std::move(reason)};
    return out;
  };
  auto manifest = parseLaunchManifest(candidate.source, problem);
  if (!manifest) return refuse(manifest.error());
  if (auto include = disallowedInclude(candidate.source)) return refuse(*include);
  CandidatePlan plan{candidate.source, manifest->kernelNames(), {}};
  for (const auto& set : problem.sizeSets) {
    auto p = planFromManifest(*manifest, set.sizes);
    if (!p) return refuse(fmt::format("manifest: with sizes '{}': {}", set.name, p.error()));
    if (auto v = validatePlan(*p, problemBuffers(problem, set.sizes)))
      return refuse(fmt::format("manifest: with sizes '{}': {}", set.name, v->message));
    plan.plans[set.name] = std::move(*p);
  }
  out.plan = std::move(plan);
  return out;
}

}  // namespace cuset
