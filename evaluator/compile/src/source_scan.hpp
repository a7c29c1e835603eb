#pragma once
// Scanning candidate source text for the sim's host-build rewrites (sim_compiler.cpp for dynamic
// shared memory, sim_inline_ptx.cpp for inline PTX): comments and literals are opaque, braces count.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace cuset::detail {

inline bool identifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// If `i` starts a comment or a string or character literal, the index just past it; otherwise i.
inline std::size_t skipOpaque(std::string_view s, std::size_t i) {
  if (s.compare(i, 2, "//") == 0) {
    while (i < s.size() && s[i] != '\n') i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
    return i;
  }
  if (s.compare(i, 2, "/*") == 0) {
    const std::size_t end = s.find("*/", i + 2);
    return end == std::string_view::npos ? s.size() : end + 2;
  }
  if (s[i] == 'R' && i + 1 < s.size() && s[i + 1] == '"' && (i == 0 || !identifierChar(s[i - 1]))) {
    const std::size_t open = s.find('(', i + 2);
    if (open == std::string_view::npos) return s.size();
    const std::string close = ")" + std::string(s.substr(i + 2, open - i - 2)) + "\"";
    const std::size_t end = s.find(close, open);
    return end == std::string_view::npos ? s.size() : end + close.size();
  }
  if (s[i] == '"' || (s[i] == '\'' && (i == 0 || !std::isxdigit(static_cast<unsigned char>(s[i - 1]))))) {  // 1'000 is a digit separator
    const char q = s[i++];
    while (i < s.size() && s[i] != q && s[i] != '\n') i += (s[i] == '\\') ? 2 : 1;
    return std::min(i + 1, s.size());
  }
  return i;
}

// 1-based line of `pos`.
inline int lineAt(std::string_view s, std::size_t pos) {
  return 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// Brace depth at `pos`, outside comments and literals.
inline int braceDepthAt(std::string_view s, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = 0; i < pos && i < s.size();) {
    if (const std::size_t next = skipOpaque(s, i); next != i) {
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
