#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuset/evaluator/problem/input_generator.hpp"

namespace cuset {
namespace {

TensorSpec spec(DType dtype, Distribution d) {
  TensorSpec t;
  t.name = "x";
  t.dtype = dtype;
  t.init = std::move(d);
  return t;
}

Distribution normal(double mean, double stddev) {
  Distribution d;
  d.mean = mean;
  d.stddev = stddev;
  return d;
}

Distribution range(Distribution::Kind kind, double low, double high) {
  Distribution d;
  d.kind = kind;
  d.low = low;
  d.high = high;
  return d;
}

TEST(InputGenerator, SameSeedSameValuesOtherSeedOtherValues) {
  const TensorSpec s = spec(DType::float32, normal(0, 1));
  const HostTensor a = generateTensor(s, {1000}, 42);
  const HostTensor b = generateTensor(s, {1000}, 42);
  const HostTensor c = generateTensor(s, {1000}, 43);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byteSize()), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.byteSize()), 0);
}

TEST(InputGenerator, StreamsDifferPerTrialAndTensor) {
  EXPECT_NE(streamSeed(1, 0, "x"), streamSeed(1, 1, "x"));
  EXPECT_NE(streamSeed(1, 0, "x"), streamSeed(1, 0, "y"));
  EXPECT_NE(streamSeed(1, 0, "x"), streamSeed(2, 0, "x"));
  EXPECT_EQ(streamSeed(7, 3, "w"), streamSeed(7, 3, "w"));
}

TEST(InputGenerator, NormalHasRequestedMoments) {
  const HostTensor t = generateTensor(spec(DType::float32, normal(3.0, 2.0)), {200000}, 1);
  double sum = 0, sq = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    sum += t.valueAsDouble(i);
    sq += t.valueAsDouble(i) * t.valueAsDouble(i);
  }
  const double mean = sum / t.numel();
  const double var = sq / t.numel() - mean * mean;
  EXPECT_NEAR(mean, 3.0, 0.03);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.03);
}

TEST(InputGenerator, UniformAndRandintStayInRangeAndCoverIt) {
  const HostTensor u = generateTensor(spec(DType::bfloat16, range(Distribution::Kind::uniform, -2, 2)), {10000}, 5);
  const HostTensor r = generateTensor(spec(DType::int64, range(Distribution::Kind::randint, -3, 4)), {10000}, 5);
  std::vector<int> seen(7, 0);
  for (std::int64_t i = 0; i < u.numel(); ++i) {
    EXPECT_GE(u.valueAsDouble(i), -2.0);
    EXPECT_LE(u.valueAsDouble(i), 2.0);  // bf16 rounding may reach the bound itself
    const auto v = r.as<std::int64_t>()[i];
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    ++seen[static_cast<std::size_t>(v + 3)];
  }
  for (int count : seen) EXPECT_GT(count, 1000);
}

TEST(InputGenerator, BoolAndHalfEncodings) {
  const HostTensor b = generateTensor(spec(DType::boolean, range(Distribution::Kind::randint, 0, 2)), {1000}, 9);
  int ones = 0;
  for (std::int64_t i = 0; i < b.numel(); ++i) {
    ASSERT_LE(b.as<std::uint8_t>()[i], 1);
    ones += b.as<std::uint8_t>()[i];
  }
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
  const HostTensor h = generateTensor(spec(DType::float16, range(Distribution::Kind::uniform, 10, 11)), {100}, 9);
  for (std::int64_t i = 0; i < h.numel(); ++i) EXPECT_NEAR(h.valueAsDouble(i), 10.5, 0.51);
}

TEST(InputGenerator, MixDrawsFromEveryComponent) {
  Distribution mix;
  mix.kind = Distribution::Kind::mix;
  mix.components = {{0.5, range(Distribution::Kind::uniform, 0, 1)}, {0.5, range(Distribution::Kind::uniform, 100, 101)}};
  const HostTensor t = generateTensor(spec(DType::float32, mix), {10000}, 3);
  int high = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) high += t.valueAsDouble(i) >= 100 ? 1 : 0;
  EXPECT_NEAR(high, 5000, 300);
}

TEST(HostTensor, IsAlignedAndZeroFilled) {
  const HostTensor t(DType::float16, {3, 5});
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
  EXPECT_EQ(t.byteSize(), 30u);
  for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.valueAsDouble(i), 0.0);
  EXPECT_EQ(t.shapeString(), "[3, 5]");
}

}  // namespace
}  // namespace cuset
