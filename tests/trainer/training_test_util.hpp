#pragma once
// What the training tests share: quiet run options, and a run interrupted after a checkpoint and
// resumed, to compare with the same run done in one go.
#include <cstdint>
#include <filesystem>

#include "cuset/trainer/training.hpp"

namespace cuset::test {

inline TrainRunOptions quietRun(const std::filesystem::path& out) {
  TrainRunOptions o;
  o.outDir = out;
  o.showProgress = false;
  return o;
}

// `config` trained into `out` up to step `stopAt` (where it must save a checkpoint), then resumed to
// its end; returns the resumed part's summary.
inline TrainRunSummary trainInterruptedAndResumed(const TrainConfig& config, const std::filesystem::path& out, std::int64_t stopAt) {
  TrainRunOptions first = quietRun(out);
  first.maxSteps = stopAt;
  runTraining(config, first);
  TrainRunOptions rest = quietRun(out);
  rest.resume = true;
  return runTraining(config, rest);
}

}  // namespace cuset::test
