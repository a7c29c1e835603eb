#pragma once
// The autotuned configurations of a Triton recording for a GPU, each assembled alone: Triton's timing on a
// GPU skips a configuration ptxas refuses (PTXASError: too few registers for an instruction under the
// block's thread bound, say) and tunes among the rest, while one module holding every configuration would
// fail to build as a whole. Private to the translator.
#include <nlohmann/json.hpp>
#include <string>

namespace cuset::detail {

// `triton`: the recording's "triton" object (its "kernels": [{name, code}] in compile order); `plans`: the
// recording's plans per size set, whose autotuned launches lose the configurations ptxas refuses for
// `arch` (a launch whose first is refused takes the first left; one with a single left is no longer
// autotuned; one with none is left as it is, to fail to build as Triton's call fails). Returns the device
// code of the kernels launched (configurations the recorder left out are compiled but never launched);
// what was left out here is appended to `log`, a line each.
std::string assembledConfigurations(const nlohmann::json& triton, nlohmann::json& plans, const std::string& arch, std::string& log);

}  // namespace cuset::detail
