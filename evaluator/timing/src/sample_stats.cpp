#include "cuset/evaluator/timing/sample_stats.hpp"

#include <algorithm>
#include <cmath>

namespace cuset {

SampleStats computeStats(const std::vector<double>& samples) {
  SampleStats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  s.median = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  s.min = sorted.front();
  s.max = sorted.back();
  double sum = 0.0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double var = 0.0;
    for (double v : sorted) var += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(var / static_cast<double>(sorted.size() - 1));
  }
  return s;
}

std::string_view stopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::converged:
      return "converged";
    case StopReason::timeCap:
      return "time_cap";
    case StopReason::sampleCap:
      return "sample_cap";
  }
  return "?";
}

std::optional<StopReason> SampleCollector::shouldStop(double elapsedWallSeconds) const {
  if (samples_.size() >= rule_.maxSamples) return StopReason::sampleCap;
  if (elapsedWallSeconds >= rule_.maxWallSeconds) return StopReason::timeCap;
  if (samples_.size() < rule_.minSamples || totalMs_ / 1000.0 < rule_.minTotalSeconds) return std::nullopt;
  // Noise of the recent window, so a noisy warm-up phase does not keep the measurement going forever.
  const std::size_t window = std::max(rule_.minSamples, samples_.size() / 2);
  const std::vector<double> recent(samples_.end() - static_cast<std::ptrdiff_t>(window), samples_.end());
  if (computeStats(recent).relStddev() <= rule_.maxRelStddev) return StopReason::converged;
  return std::nullopt;
}

}  // namespace cuset
