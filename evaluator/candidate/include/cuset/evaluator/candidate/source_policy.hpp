#pragma once
// Rules on candidate sources that hold for every backend.
#include <optional>
#include <string>
#include <string_view>

namespace cuset {

// A candidate is one self-contained file: it may include only CUDA toolkit headers and the C/C++
// headers the compatibility prelude stands in for. A quoted include, or any other header, is refused
// (it would read files of the evaluation host into a compile log). Returns the reason, or nullopt.
std::optional<std::string> disallowedInclude(std::string_view source);

}  // namespace cuset
