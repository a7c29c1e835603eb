#pragma once
// Statistics of timing samples and the rule that decides when enough have been taken (nvbench's
// approach): at least `minSamples` samples and `minTotal` of measured time, then stop once the
// relative standard deviation is at most `maxRelStddev`, or at the time cap.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cuset {

struct SampleStats {
  std::size_t count = 0;
  double median = 0.0, mean = 0.0, stddev = 0.0, min = 0.0, max = 0.0;
  double relStddev() const { return mean > 0 ? stddev / mean : 0.0; }
};

SampleStats computeStats(const std::vector<double>& samples);

struct StoppingRule {
  std::size_t minSamples = 10;
  double maxRelStddev = 0.005;   // 0.5%
  double minTotalSeconds = 0.5;  // of measured (GPU) time
  double maxWallSeconds = 15.0;  // cap: stop even if still noisy
  std::size_t maxSamples = 100000;
};

enum class StopReason { converged, timeCap, sampleCap };
std::string_view stopReasonName(StopReason reason);

// Feed samples one by one; `shouldStop` says whether to stop after the latest one.
class SampleCollector {
 public:
  explicit SampleCollector(StoppingRule rule) : rule_(rule) {}
  void add(double sampleMs) {
    samples_.push_back(sampleMs);
    totalMs_ += sampleMs;
  }
  // `elapsedWallSeconds`: wall time spent measuring so far (host clock), for the cap.
  std::optional<StopReason> shouldStop(double elapsedWallSeconds) const;
  const std::vector<double>& samples() const { return samples_; }

 private:
  StoppingRule rule_;
  std::vector<double> samples_;
  double totalMs_ = 0.0;
};

}  // namespace cuset
