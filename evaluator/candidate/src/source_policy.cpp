#include "cuset/evaluator/candidate/source_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "cuset/common/cpp_lexer.hpp"

namespace cuset {
namespace {

// The toolkit's device headers and the few C headers NVRTC provides. No host header (a candidate is
// device code) and nothing a candidate could use to read a file: every name resolves inside the CUDA
// include folders (the include policy of docs/candidate-format.md).
constexpr auto kAllowed = std::to_array<std::string_view>({"cuda_runtime.h",
                                                           "cuda_runtime_api.h",
                                                           "cuda.h",
                                                           "cuda_fp16.h",
                                                           "cuda_bf16.h",
                                                           "cuda_fp8.h",
                                                           "device_launch_parameters.h",
                                                           "device_functions.h",
                                                           "math_constants.h",
                                                           "vector_types.h",
                                                           "vector_functions.h",
                                                           "mma.h",
                                                           "cuda_pipeline.h",
                                                           "cuda_pipeline_primitives.h",
                                                           "cuda_awbarrier.h",
                                                           "cuda_awbarrier_primitives.h",
                                                           "cooperative_groups.h",
                                                           "cooperative_groups/reduce.h",
                                                           "cooperative_groups/memcpy_async.h",
                                                           "cooperative_groups/scan.h",
                                                           "cuda/barrier",
                                                           "cuda/pipeline",
                                                           "cuda/atomic",
                                                           "cuda/latch",
                                                           "cuda/semaphore",
                                                           "cuda/cmath",
                                                           "stdint.h",
                                                           "cstdint",
                                                           "math.h",
                                                           "cmath",
                                                           "float.h",
                                                           "cfloat",
                                                           "limits.h",
                                                           "climits",
                                                           "stddef.h",
                                                           "cstddef",
                                                           "stdio.h",
                                                           "cstdio",
                                                           "assert.h",
                                                           "cassert",
                                                           "type_traits",
                                                           "limits"});

// Families named by pattern: libcu++'s `cuda/std/<header>` and CUB's block- and warp-level headers
// (`cub/block/block_reduce.cuh`), which NVRTC compiles. One plain name after the prefix: no further
// '/', so no "..", and no "detail" folder.
bool allowedFamily(std::string_view header, std::string_view prefix, std::string_view suffix) {
  if (!header.starts_with(prefix) || !header.ends_with(suffix) || header.size() <= prefix.size() + suffix.size()) return false;
  const std::string_view name = header.substr(prefix.size(), header.size() - prefix.size() - suffix.size());
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'; });
}

bool allowedHeader(std::string_view header) {
  return std::find(kAllowed.begin(), kAllowed.end(), header) != kAllowed.end() || allowedFamily(header, "cuda/std/", "") ||
         allowedFamily(header, "cub/block/", ".cuh") || allowedFamily(header, "cub/warp/", ".cuh");
}

std::string allowedHint() {
  return "the CUDA toolkit's device headers (cuda_fp16.h, mma.h, cuda_pipeline.h, cooperative_groups.h, cuda/std/..., "
         "cub/block/..., ...) and <cstdint>/<cmath>/<cfloat>/<climits>/<cstdio>/<cassert> are";
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
  out.text.reserve(s.size());
  out.line.reserve(s.size());
  auto copy = [&](std::size_t from, std::size_t to, bool newlinesAsSpaces) {
    for (std::size_t k = from; k < to; ++k) {
      out.text += newlinesAsSpaces && s[k] == '\n' ? ' ' : s[k];
      out.line.push_back(sl[k]);
    }
  };
  std::size_t done = 0;
  for (const CppToken& t : lexCpp(s, /*directiveLines=*/false)) {
    copy(done, t.begin, false);
    done = t.end;
    if (t.kind == CppToken::Kind::comment) {
      out.text += ' ';
      out.line.push_back(sl[t.begin]);
      continue;
    }
    // A raw string's newlines start no directive.
    const std::string_view text = t.text(s);
    const bool raw = t.kind == CppToken::Kind::literal && text.find("R\"") < text.find('"');
    copy(t.begin, t.end, raw);
  }
  copy(done, s.size(), false);
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

std::span<const std::string_view> allowedHeaderNames() { return kAllowed; }

bool isAllowedHeader(std::string_view header) { return allowedHeader(header); }

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
