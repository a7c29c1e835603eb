#pragma once
// The reward a trainer asks the native API for (docs/serve.md "Rewards"), from a task's response.
#include <nlohmann/json.hpp>
#include <string>

namespace cuset::service {

// "kevin": 0.5 * correct + 0.5 * min(speedup, 3) (Kevin-32B's), speedup 0 where there is none;
// "threshold": correct + (speedup >= 1.01), so a correct kernel no faster than PyTorch earns 1, a faster
// one 2; "ladder": 0 not compiled, 0.1 compiled, 0.4 correct, then 0.6, 0.8 and 1.0 at speedups of 1,
// 1.5 and 2.
double rewardFor(const std::string& formula, const nlohmann::json& response);
bool rewardFormulaKnown(const std::string& formula);
std::string rewardFormulaList();  // "kevin, threshold, ladder"

}  // namespace cuset::service
