#pragma once
// How long the rest of a loop should take, from the work left in the units its stages consume
// (training steps, generated samples, judged candidates) and the rate measured for each unit so far.
// Stage counts are no measure: one base-training stage can outlast fifty evaluations.
#include <map>
#include <string>
#include <vector>

namespace cuset {

struct StageWork {
  std::string unit;     // "step", "sample", "candidate", "synth"; empty: negligible (a 0-step init)
  double amount = 0.0;  // units this stage consumes; < 0: not known yet
};

class WorkEta {
 public:
  // A finished stage: `amount` units of `unit` in `seconds`.
  void record(const StageWork& work, double seconds);

  struct Estimate {
    double seconds = 0.0;                // for the units with a rate (a lower bound when `unknown` is not empty)
    std::map<std::string, double> left;  // units left, per unit
    std::vector<std::string> unknown;    // units with work left but no rate yet, or an amount not known yet
  };
  Estimate estimate(const std::vector<StageWork>& remaining) const;

  // "ETA ~12m30s (1200 steps, 240 samples, 240 candidates left)"; "ETA > 3m05s (...; no rate yet for
  // sample)"; "ETA ? (no rate yet for synth)" before anything was measured.
  static std::string describe(const Estimate& estimate);

 private:
  std::map<std::string, std::pair<double, double>> done_;  // unit -> (amount, seconds)
};

}  // namespace cuset
