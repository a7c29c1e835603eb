#pragma once
// The recorder's output for one size set turned into a LaunchPlan: every name, view, offset,
// geometry and op checked against the problem (the recording is output of candidate code, as
// untrusted as a manifest), and its outputs made the problem's.
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

struct PlanRefusal {
  std::string verdict;  // runtime_error (a launch a GPU refuses), unsupported, invalid_submission
  std::string reason;
};

std::variant<LaunchPlan, PlanRefusal> planFromRecording(const nlohmann::json& recorded, const Problem& problem, const SizeSet& sizeSet);

}  // namespace cuset
