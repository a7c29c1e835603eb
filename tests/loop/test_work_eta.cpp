// The loop's ETA comes from the work left in each unit and the rate measured for that unit.
#include <gtest/gtest.h>

#include "cuset/loop/work_eta.hpp"

namespace cuset {
namespace {

TEST(WorkEta, AddsTheWorkLeftAtEachUnitsOwnRate) {
  WorkEta eta;
  eta.record({"step", 1000}, 500.0);    // base training: 0.5 s per step
  eta.record({"sample", 40}, 20.0);     // 0.5 s per sample
  eta.record({"candidate", 40}, 80.0);  // 2 s per candidate
  eta.record({}, 1.0);                  // a 0-step init teaches nothing
  const auto e = eta.estimate({{"step", 200}, {"sample", 40}, {"candidate", 40}, {}, {"step", 200}});
  EXPECT_DOUBLE_EQ(e.seconds, 400 * 0.5 + 40 * 0.5 + 40 * 2.0);
  EXPECT_TRUE(e.unknown.empty());
  EXPECT_EQ(WorkEta::describe(e), "ETA ~5m00s (40 candidates, 40 samples, 400 steps left)");
}

// 52 minutes into a run the stage-count ETA read "~862m": one long stage's time was charged to every
// stage of an unmeasured kind. Units without a rate are named instead, and the time is a lower bound.
TEST(WorkEta, UnitsWithoutARateMakeALowerBoundThatSaysSo) {
  WorkEta eta;
  eta.record({"step", 1000}, 3000.0);
  const auto e = eta.estimate({{"step", 100}, {"sample", 40}, {"candidate", -1}});
  EXPECT_DOUBLE_EQ(e.seconds, 300.0);
  EXPECT_EQ(e.unknown, (std::vector<std::string>{"sample", "candidate"}));
  EXPECT_EQ(WorkEta::describe(e), "ETA > 5m00s (40 samples, 100 steps left; no rate yet for sample, candidate)");
  EXPECT_EQ(WorkEta::describe(WorkEta().estimate({{"synth", 1}})), "ETA ? (no rate yet for synth)");
  EXPECT_EQ(WorkEta::describe(WorkEta().estimate({})), "ETA ~0s");
}

}  // namespace
}  // namespace cuset
