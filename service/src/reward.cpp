#include "cuset/service/reward.hpp"

#include <algorithm>

namespace cuset::service {

double rewardFor(const std::string& formula, const nlohmann::json& r) {
  const bool compiled = r.value("compiled", false);
  const bool correct = r.value("correctness", false);
  const double speedup = correct && r.contains("speedup") && r["speedup"].is_number() ? r["speedup"].get<double>() : 0.0;
  if (formula == "threshold") return (correct ? 1.0 : 0.0) + (speedup >= 1.01 ? 1.0 : 0.0);
  if (formula == "ladder") {
    if (!compiled) return 0.0;
    if (!correct) return 0.1;
    return speedup >= 2.0 ? 1.0 : speedup >= 1.5 ? 0.8 : speedup >= 1.0 ? 0.6 : 0.4;
  }
  return 0.5 * (correct ? 1.0 : 0.0) + 0.5 * std::min(speedup, 3.0);
}

bool rewardFormulaKnown(const std::string& formula) { return formula == "kevin" || formula == "threshold" || formula == "ladder"; }

std::string rewardFormulaList() { return "kevin, threshold, ladder"; }

}  // namespace cuset::service
