#include "cuset/loop/work_eta.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "cuset/common/progress.hpp"

namespace cuset {

void WorkEta::record(const StageWork& work, double seconds) {
  if (work.unit.empty() || work.amount <= 0) return;
  auto& d = done_[work.unit];
  d.first += work.amount;
  d.second += seconds;
}

WorkEta::Estimate WorkEta::estimate(const std::vector<StageWork>& remaining) const {
  Estimate e;
  for (const auto& w : remaining) {
    if (w.unit.empty()) continue;
    const auto rate = done_.find(w.unit);
    if (w.amount < 0 || rate == done_.end()) {
      if (std::find(e.unknown.begin(), e.unknown.end(), w.unit) == e.unknown.end()) e.unknown.push_back(w.unit);
      if (w.amount > 0) e.left[w.unit] += w.amount;
      continue;
    }
    e.left[w.unit] += w.amount;
    e.seconds += w.amount * rate->second.second / rate->second.first;
  }
  return e;
}

std::string WorkEta::describe(const Estimate& e) {
  std::vector<std::string> parts;
  for (const auto& [unit, amount] : e.left) {
    if (unit != "synth") parts.push_back(fmt::format("{:.0f} {}{}", amount, unit, amount == 1 ? "" : "s"));
  }
  std::string left = parts.empty() ? "" : fmt::format("{} left", fmt::join(parts, ", "));
  if (e.unknown.empty()) return fmt::format("ETA ~{}{}", ProgressBar::formatDuration(e.seconds), left.empty() ? "" : " (" + left + ")");
  if (e.seconds <= 0) return fmt::format("ETA ? ({}{}no rate yet for {})", left, left.empty() ? "" : "; ", fmt::join(e.unknown, ", "));
  return fmt::format("ETA > {} ({}{}no rate yet for {})", ProgressBar::formatDuration(e.seconds), left, left.empty() ? "" : "; ",
                     fmt::join(e.unknown, ", "));
}

}  // namespace cuset
