#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "cuset/evaluator/correctness/compare_output.hpp"

namespace cuset {
namespace {

HostTensor floats(std::vector<std::int64_t> shape, std::vector<float> values) {
  HostTensor t(DType::float32, std::move(shape));
  for (std::size_t i = 0; i < values.size(); ++i) t.as<float>()[i] = values[i];
  return t;
}

TEST(OutputComparison, ToleranceIsAbsolutePlusRelativeElementwise) {
  const Tolerance tol{0.1, 0.1};
  const auto want = floats({2, 2}, {1.0f, 10.0f, 0.0f, -2.0f});
  // Allowed errors: 0.2, 1.1, 0.1, 0.3. Used: 0.15/0.2, 1.0/1.1, 0.05/0.1, 0.
  const auto c = compareOutput("y", floats({2, 2}, {1.15f, 11.0f, 0.05f, -2.0f}), want, tol);
  EXPECT_TRUE(c.passed());
  EXPECT_NEAR(c.toleranceUse, 1.0 / 1.1, 1e-5);
  EXPECT_NE(c.describe().find("91% of the tolerance"), std::string::npos) << c.describe();

  const auto bad = compareOutput("y", floats({2, 2}, {1.0f, 10.0f, 0.5f, -2.0f}), want, tol);
  EXPECT_EQ(bad.mismatches, 1);
  EXPECT_EQ(bad.firstMismatchIndex, (std::vector<std::int64_t>{1, 0}));
  EXPECT_FLOAT_EQ(static_cast<float>(bad.firstGot), 0.5f);
  EXPECT_GT(bad.toleranceUse, 1.0);
}

TEST(OutputComparison, NanAndInfMustMatchInPlace) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto want = floats({3}, {nan, inf, 1.0f});
  EXPECT_TRUE(compareOutput("y", floats({3}, {nan, inf, 1.0f}), want, {0.0, 0.0}).passed());
  EXPECT_EQ(compareOutput("y", floats({3}, {0.0f, inf, 1.0f}), want, {1.0, 1.0}).mismatches, 1);  // a number where NaN belongs
  EXPECT_EQ(compareOutput("y", floats({3}, {nan, -inf, 1.0f}), want, {1.0, 1.0}).mismatches, 1);  // the wrong infinity
  EXPECT_EQ(compareOutput("y", floats({3}, {nan, inf, nan}), want, {1.0, 1.0}).mismatches, 1);    // NaN where a number belongs
  // The error maxima are over finite pairs: the description says what they leave out (before: an output
  // of infinities read "max abs err 0").
  const auto infinities = compareOutput("y", floats({2}, {inf, 1.5f}), floats({2}, {1.0f, 1.0f}), {0.0, 0.0});
  EXPECT_EQ(infinities.mismatches, 2);
  EXPECT_EQ(infinities.nonFiniteMismatches, 1);
  EXPECT_NE(infinities.describe().find("max abs err 0.5, max rel err 0.5 over the finite elements; 1 mismatch(es) with NaN or Inf on one side"),
            std::string::npos)
      << infinities.describe();
  EXPECT_EQ(outputComparisonFromJson(toJson(infinities)).nonFiniteMismatches, 1);
  EXPECT_EQ(compareOutput("y", floats({1}, {2.0f}), floats({1}, {1.0f}), {0.0, 0.0}).describe().find("NaN or Inf"), std::string::npos);
}

TEST(OutputComparison, IntegersMatchExactlyAndResultsRoundTrip) {
  HostTensor want(DType::int64, {2}), got(DType::int64, {2});
  want.as<std::int64_t>()[0] = 5;
  want.as<std::int64_t>()[1] = 7;
  got.as<std::int64_t>()[0] = 5;
  got.as<std::int64_t>()[1] = 8;
  const auto c = compareOutput("idx", got, want, {1.0, 1.0});  // tolerances do not apply to integers
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.toleranceUse, 0.0);
  const auto back = outputComparisonFromJson(toJson(c));
  EXPECT_EQ(back.mismatches, c.mismatches);
  EXPECT_EQ(back.firstMismatchIndex, c.firstMismatchIndex);
  nlohmann::json old = toJson(c);
  old.erase("tolerance_use");  // results written before the field existed still load
  EXPECT_EQ(outputComparisonFromJson(old).toleranceUse, 0.0);
}

}  // namespace
}  // namespace cuset
