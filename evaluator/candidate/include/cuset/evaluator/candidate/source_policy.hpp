#pragma once
// Rules on candidate sources that hold for every backend.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cuset {

// A candidate is one self-contained file: it may include only CUDA toolkit headers and the C/C++
// headers the compatibility prelude stands in for. A quoted include, or any other header, is refused
// (it would read files of the evaluation host into a compile log). Returns the reason, or nullopt.
std::optional<std::string> disallowedInclude(std::string_view source);

// The headers allowed by name (beside them, the families `cuda/std/<name>`, `cub/block/<name>.cuh`
// and `cub/warp/<name>.cuh`).
std::span<const std::string_view> allowedHeaderNames();
// Whether `#include <header>` is allowed in a candidate.
bool isAllowedHeader(std::string_view header);

}  // namespace cuset
