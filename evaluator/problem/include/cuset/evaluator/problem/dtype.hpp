#pragma once
// Element types of problem tensors (DESIGN §2) and the host-side fp16/bf16 conversions the harness
// needs to generate inputs and compare outputs without any CUDA or LibTorch header.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cuset {

enum class DType { float32, float16, bfloat16, int32, int64, boolean };

std::string_view dtypeName(DType dtype);  // "float32", ..., "bool"
std::optional<DType> parseDType(std::string_view text);
std::size_t dtypeSize(DType dtype);
bool isFloating(DType dtype);
inline constexpr std::string_view kDTypeList = "float32, float16, bfloat16, int32, int64, bool";

// IEEE binary16 / bfloat16 <-> float, round-to-nearest-even, NaN and Inf preserved.
std::uint16_t floatToHalfBits(float value);
float halfBitsToFloat(std::uint16_t bits);
std::uint16_t floatToBfloat16Bits(float value);
float bfloat16BitsToFloat(std::uint16_t bits);

}  // namespace cuset
