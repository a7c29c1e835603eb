#include "cuset/evaluator/problem/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

namespace cuset {

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view text) {
  for (DType d : {DType::float32, DType::float16, DType::bfloat16, DType::int32, DType::int64, DType::boolean}) {
    if (text == dtypeName(d)) return d;
  }
  return std::nullopt;
}

std::size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::int32:
      return 4;
    case DType::float16:
    case DType::bfloat16:
      return 2;
    case DType::int64:
      return 8;
    case DType::boolean:
      return 1;
  }
  return 0;
}

bool isFloating(DType dtype) { return dtype == DType::float32 || dtype == DType::float16 || dtype == DType::bfloat16; }

std::uint16_t floatToHalfBits(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t absBits = f & 0x7fffffffu;
  if (absBits >= 0x7f800000u) {  // Inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7c00u | (absBits > 0x7f800000u ? 0x200u | ((absBits >> 13) & 0x3ffu) : 0u));
  }
  if (absBits >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: Inf
  if (absBits < 0x38800000u) {                                                    // below the smallest normal half: subnormal or zero
    if (absBits < 0x33000000u) return static_cast<std::uint16_t>(sign);           // < half of smallest subnormal
    const std::uint32_t exponent = absBits >> 23;
    const std::uint32_t mantissa = (absBits & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;  // 14 + (113 - exponent - 1) ... aligns to 2^-24 units
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = ((absBits - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
  const std::uint32_t rest = absBits & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

float halfBitsToFloat(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t floatToBfloat16Bits(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t roundingBias = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>((f + roundingBias) >> 16);
}

float bfloat16BitsToFloat(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

}  // namespace cuset
