#include "cuset/evaluator/candidate/source_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <regex>

namespace cuset {
namespace {

constexpr std::array<std::string_view, 31> kAllowed = {
    "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cuda_fp16.h", "cuda_bf16.h", "device_launch_parameters.h",
    "device_functions.h", "math_constants.h", "vector_types.h", "vector_functions.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "stdint.h", "cstdint", "math.h", "cmath", "float.h", "cfloat", "limits.h", "climits",
    "stddef.h", "cstddef", "stdio.h", "cstdio", "assert.h", "cassert", "cuda/std/cstdint", "cuda/std/limits",
    "cuda/std/type_traits", "type_traits", "limits"};

}  // namespace

std::optional<std::string> disallowedInclude(std::string_view source) {
  static const std::regex kInclude(R"(^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]*)[>"])", std::regex::multiline);
  const std::string text(source);
  int line = 1;
  std::size_t counted = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kInclude); it != std::sregex_iterator(); ++it) {
    const std::size_t pos = static_cast<std::size_t>(it->position());
    line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    counted = pos;
    const std::string delimiter = (*it)[1].str();
    const std::string header = (*it)[2].str();
    if (delimiter == "\"") {
      return fmt::format("line {}: #include \"{}\": candidates are single files, so quoted includes are not allowed", line, header);
    }
    if (std::find(kAllowed.begin(), kAllowed.end(), header) == kAllowed.end()) {
      return fmt::format("line {}: #include <{}> is not available to candidates (CUDA toolkit headers such as cuda_fp16.h and "
                         "cooperative_groups.h, and <cstdint>/<cmath>/<cfloat>/<climits>/<cstdio>/<cassert> are)",
                         line, header);
    }
  }
  return std::nullopt;
}

}  // namespace cuset
