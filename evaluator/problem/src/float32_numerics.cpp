#include "cuset/evaluator/problem/float32_numerics.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

namespace cuset {
namespace {

constexpr std::array<std::pair<GpuClass, std::string_view>, 7> kNames = {{{GpuClass::none, "none"},
                                                                          {GpuClass::volta, "volta"},
                                                                          {GpuClass::turing, "turing"},
                                                                          {GpuClass::ampere, "ampere"},
                                                                          {GpuClass::ada, "ada"},
                                                                          {GpuClass::hopper, "hopper"},
                                                                          {GpuClass::blackwell, "blackwell"}}};

}  // namespace

std::string_view gpuClassName(GpuClass gpu) {
  for (const auto& [g, name] : kNames) {
    if (g == gpu) return name;
  }
  return "none";
}

std::optional<GpuClass> parseGpuClass(std::string_view name) {
  for (const auto& [g, n] : kNames) {
    if (n == name) return g;
  }
  return std::nullopt;
}

GpuClass gpuClassOfArch(std::string_view arch) {
  // "sm_90a", "compute_86" or "8.9": the digits are major then minor.
  int major = 0, minor = 0;
  const std::size_t digits = arch.find_first_of("0123456789");
  if (digits == std::string_view::npos) return GpuClass::none;
  arch.remove_prefix(digits);
  if (const std::size_t dot = arch.find('.'); dot != std::string_view::npos) {
    std::from_chars(arch.data(), arch.data() + dot, major);
    std::from_chars(arch.data() + dot + 1, arch.data() + arch.size(), minor);
  } else {
    int both = 0;
    std::from_chars(arch.data(), arch.data() + arch.size(), both);
    major = both / 10;
    minor = both % 10;
  }
  if (major >= 10) return GpuClass::blackwell;
  if (major == 9) return GpuClass::hopper;
  if (major == 8) return minor == 9 ? GpuClass::ada : GpuClass::ampere;
  if (major == 7) return minor >= 5 ? GpuClass::turing : GpuClass::volta;
  return GpuClass::none;
}

Float32Numerics float32NumericsOn(GpuClass gpu) {
  switch (gpu) {
    case GpuClass::ampere:
    case GpuClass::ada:
    case GpuClass::hopper:
    case GpuClass::blackwell:
      return Float32Numerics::tf32Convolutions;
    default:
      return Float32Numerics::exact;
  }
}

bool isTf32Convolution(std::string_view op) {
  static constexpr std::array<std::string_view, 9> kOps = {"aten::conv1d",           "aten::conv2d",           "aten::conv3d",
                                                           "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
                                                           "aten::convolution",      "aten::_convolution",     "aten::_convolution_mode"};
  for (std::string_view o : kOps) {
    if (o == op) return true;
  }
  return false;
}

float roundToTf32(float value) {
  if (!std::isfinite(value)) return value;
  // Adding half of the 13 dropped bits' range to the bit pattern rounds the magnitude to nearest, ties
  // away from zero; a carry into the exponent is the correct rounding up (to infinity past the largest).
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  return std::bit_cast<float>((bits + 0x1000u) & ~0x1FFFu);
}

}  // namespace cuset
