#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "cuset/evaluator/problem/dtype.hpp"

namespace cuset {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType d : {DType::float32, DType::float16, DType::bfloat16, DType::int32, DType::int64, DType::boolean}) {
    EXPECT_EQ(parseDType(dtypeName(d)), d);
  }
  EXPECT_FALSE(parseDType("float64").has_value());
  EXPECT_EQ(dtypeSize(DType::bfloat16), 2u);
  EXPECT_EQ(dtypeSize(DType::boolean), 1u);
}

TEST(Half, KnownEncodings) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00);               // rounds to infinity
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);  // tie rounds to even (zero)
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(std::nanf("")))));
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even gives 1.
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = halfBitsToFloat(static_cast<std::uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToHalfBits(f), bits) << std::hex << bits;
  }
}

TEST(Bfloat16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBfloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16BitsToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even gives 1.
  EXPECT_EQ(floatToBfloat16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBfloat16Bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBfloat16Bits(std::nanf("")))));
}

}  // namespace
}  // namespace cuset
