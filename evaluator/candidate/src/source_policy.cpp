#include "cuset/evaluator/candidate/source_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace cuset {
namespace {

constexpr std::array<std::string_view, 31> kAllowed = {
    "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cuda_fp16.h", "cuda_bf16.h", "device_launch_parameters.h",
    "device_functions.h", "math_constants.h", "vector_types.h", "vector_functions.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "stdint.h", "cstdint", "math.h", "cmath", "float.h", "cfloat", "limits.h", "climits",
    "stddef.h", "cstddef", "stdio.h", "cstdio", "assert.h", "cassert", "cuda/std/cstdint", "cuda/std/limits",
    "cuda/std/type_traits", "type_traits", "limits"};

bool allowedHeader(std::string_view header) { return std::find(kAllowed.begin(), kAllowed.end(), header) != kAllowed.end(); }

std::string allowedHint() {
  return "CUDA toolkit headers such as cuda_fp16.h and cooperative_groups.h, and <cstdint>/<cmath>/<cfloat>/<climits>/<cstdio>/<cassert> are";
}

// The source as the preprocessor sees it after translation phases 1-3: line splices removed (and,
// conservatively, ??= / ??/ trigraphs honoured although C++17 dropped them), comments replaced by a
// space, with the original line of every character kept for messages. String and character literals
// stay as they are; raw strings are kept whole so that "#include" inside one is not a directive.
struct Logical {
  std::string text;
  std::vector<int> line;  // original line of text[i]
};

Logical translate(std::string_view src) {
  // Phases 1-2: trigraphs for '#' and '\', then splices.
  std::string s;
  std::vector<int> sl;
  int line = 1;
  for (std::size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '?' && i + 2 < src.size() && src[i + 1] == '?' && (src[i + 2] == '=' || src[i + 2] == '/')) {
      c = src[i + 2] == '=' ? '#' : '\\';
      i += 2;
    }
    if (c == '\\') {
      std::size_t j = i + 1;
      while (j < src.size() && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r')) ++j;  // GCC accepts trailing blanks
      if (j < src.size() && src[j] == '\n') {
        i = j;
        ++line;
        continue;
      }
    }
    s += c;
    sl.push_back(line);
    if (c == '\n') ++line;
  }
  // Phase 3: comments out, literals kept.
  Logical out;
  auto put = [&](char c, int l) {
    out.text += c;
    out.line.push_back(l);
  };
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      put(' ', sl[std::min(i, sl.size() - 1)]);
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const int l = sl[i];
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) ++i;
      i = std::min(i + 2, s.size());
      put(' ', l);
    } else if (c == 'R' && i + 1 < s.size() && s[i + 1] == '"' && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      // R"delim( ... )delim"
      const std::size_t open = s.find('(', i + 2);
      if (open == std::string::npos) {
        put(c, sl[i++]);
        continue;
      }
      const std::string close = ")" + s.substr(i + 2, open - (i + 2)) + "\"";
      const std::size_t end = s.find(close, open);
      const std::size_t stop = end == std::string::npos ? s.size() : end + close.size();
      for (; i < stop; ++i) put(s[i] == '\n' ? ' ' : s[i], sl[i]);  // a raw string's newlines start no directive
    } else if (c == '"' || c == '\'') {
      put(c, sl[i++]);
      while (i < s.size() && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size()) put(s[i], sl[i]), ++i;
        put(s[i], sl[i]);
        ++i;
      }
      if (i < s.size()) put(s[i], sl[i]), ++i;
    } else {
      put(c, sl[i++]);
    }
  }
  return out;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }

std::string identifierAt(const std::string& t, std::size_t& i) {
  std::string id;
  while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_')) id += t[i++];
  return id;
}

// `<name>` or `"name"` at i (after blanks): the delimiter and name; delimiter 0 when neither.
std::pair<char, std::string> headerNameAt(const std::string& t, std::size_t i) {
  while (i < t.size() && blank(t[i])) ++i;
  if (i >= t.size() || (t[i] != '<' && t[i] != '"')) return {0, {}};
  const char close = t[i] == '<' ? '>' : '"';
  const std::size_t end = t.find_first_of(std::string(1, close) + "\n", i + 1);
  if (end == std::string::npos || t[end] != close) return {0, {}};
  return {t[i], t.substr(i + 1, end - i - 1)};
}

}  // namespace

std::optional<std::string> disallowedInclude(std::string_view source) {
  const Logical src = translate(source);
  const std::string& t = src.text;
  bool lineStart = true;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const int line = src.line[i];
    if (c == '\n') {
      lineStart = true;
      continue;
    }
    if (blank(c)) continue;
    // A directive: '#' or the digraph '%:' first on a logical line.
    const bool hash = c == '#' || (c == '%' && i + 1 < t.size() && t[i + 1] == ':');
    if (lineStart && hash) {
      std::size_t j = i + (c == '#' ? 1 : 2);
      while (j < t.size() && blank(t[j])) ++j;
      const std::string directive = identifierAt(t, j);
      if (directive == "include" || directive == "include_next" || directive == "import") {
        const auto [delimiter, header] = headerNameAt(t, j);
        if (delimiter == '"') {
          return fmt::format("line {}: #{} \"{}\": candidates are single files, so quoted includes are not allowed", line, directive, header);
        }
        if (delimiter == 0) {
          return fmt::format("line {}: a computed #{} (a macro in place of <header>) is not allowed: name the header directly", line, directive);
        }
        if (directive != "include" || !allowedHeader(header)) {
          return fmt::format("line {}: #{} <{}> is not available to candidates ({})", line, directive, header, allowedHint());
        }
      } else if (directive == "embed") {
        return fmt::format("line {}: #embed is not allowed", line);
      } else if (directive == "pragma") {
        std::size_t k = j;
        while (k < t.size() && t[k] != '\n') {
          std::size_t w = k;
          if (identifierAt(t, w) == "dependency") return fmt::format("line {}: #pragma ... dependency (it reads another file) is not allowed", line);
          k = w > k ? w : k + 1;
        }
      }
      lineStart = false;
      i = j > i ? j - 1 : i;
      continue;
    }
    lineStart = false;
    // Operators that reach files outside a directive line.
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      if (i > 0 && (std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '_')) continue;
      std::size_t j = i;
      const std::string word = identifierAt(t, j);
      if (word == "__has_include" || word == "__has_include_next") {
        std::size_t k = j;
        while (k < t.size() && blank(t[k])) ++k;
        const auto [delimiter, header] = k < t.size() && t[k] == '(' ? headerNameAt(t, k + 1) : std::pair<char, std::string>{0, {}};
        if (delimiter != '<' || !allowedHeader(header)) {
          return fmt::format("line {}: {} may name only headers candidates can include ({})", line, word, allowedHint());
        }
      } else if (word == "_Pragma") {
        const std::size_t end = t.find(')', j);
        if (t.substr(j, end == std::string::npos ? std::string::npos : end - j).find("dependency") != std::string::npos) {
          return fmt::format("line {}: _Pragma(\"... dependency ...\") (it reads another file) is not allowed", line);
        }
      }
      i = j - 1;
    }
  }
  return std::nullopt;
}

}  // namespace cuset
