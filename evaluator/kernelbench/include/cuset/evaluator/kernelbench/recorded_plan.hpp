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

// The autotuned configurations of a Triton recording for a GPU, each assembled alone: Triton's timing on a
// GPU skips a configuration ptxas refuses (PTXASError: too few registers for an instruction under the
// block's thread bound, say) and tunes among the rest, while one module holding every configuration would
// fail to build as a whole; the translator calls it for the GPU's recordings.
//
// `triton`: the recording's "triton" object (its "kernels": [{name, code}] in compile order); `plans`: the
// recording's plans per size set, whose autotuned launches lose the configurations ptxas refuses for
// `arch` (a launch whose first is refused takes the first left; one with a single left is no longer
// autotuned; one with none is left as it is, to fail to build as Triton's call fails). Returns the device
// code of the kernels launched (configurations the recorder left out are compiled but never launched);
// what was left out here is appended to `log`, a line each.
std::string assembledTritonConfigurations(const nlohmann::json& triton, nlohmann::json& plans, const std::string& arch, std::string& log);

}  // namespace cuset
