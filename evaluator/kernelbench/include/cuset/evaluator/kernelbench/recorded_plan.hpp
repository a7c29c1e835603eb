#pragma once
// The recorder's output for one size set turned into a LaunchPlan: every name, view, offset,
// geometry and op checked against the problem (the recording is output of candidate code, as
// untrusted as a manifest), and its outputs made the problem's.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/results/verdict.hpp"

namespace cuset {

struct PlanRefusal {
  Verdict verdict;  // runtime_error (a launch a GPU refuses), unsupported, invalid_submission, hack_suspected
  std::string reason;
};

// How much device memory a plan may hold (the problem's buffers and its intermediates) on the device
// that runs it, and what exceeding it is: on a GPU, its memory (an allocation that fails is KernelBench's
// runtime error); on the simulator, the sandbox worker's own limit (`unsupported`: a GPU could run it).
struct MemoryBudget {
  std::int64_t bytes = 0;  // 0: no limit here (the device's allocation decides at run time)
  std::string what;        // "the GPU's free memory", "the simulator's worker limit (--memory-limit)"
  Verdict verdict = Verdict::runtime_error;
};

// `standing`: where given, what the recording itself shows wrong (a library step writes an input:
// hack_suspected; two steps on two streams race: runtime_error) does not refuse the plan: the plan is
// returned (KernelBench's check runs it, in program order) and the verdict it keeps whatever its trials
// show is set here. Without it, such a recording refuses the plan.
std::variant<LaunchPlan, PlanRefusal> planFromRecording(const nlohmann::json& recorded, const Problem& problem, const SizeSet& sizeSet,
                                                        const MemoryBudget& budget = {}, std::optional<PlanRefusal>* standing = nullptr);

}  // namespace cuset
