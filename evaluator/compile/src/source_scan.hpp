#pragma once
// Scanning candidate source text for the sim's host-build rewrites (sim_compiler.cpp for dynamic
// shared memory, sim_inline_ptx.cpp for inline PTX): comments and literals are opaque (the project's
// one C/C++ lexer, common/cpp_lexer.hpp, decides where they are), braces count.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

#include "cuset/common/cpp_lexer.hpp"

namespace cuset::detail {

// 1-based line of `pos`.
inline int lineAt(std::string_view s, std::size_t pos) {
  return 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// Brace depth at `pos`, outside comments and literals.
inline int braceDepthAt(std::string_view s, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = 0; i < pos && i < s.size();) {
    if (const std::size_t next = skipCommentOrLiteral(s, i); next != i) {
      i = next;
      continue;
    }
    if (s[i] == '{') ++depth;
    if (s[i] == '}') --depth;
    ++i;
  }
  return depth;
}

}  // namespace cuset::detail
