#include "fast_split.hpp"

#include <unicode/uchar.h>

#include <array>
#include <cstdint>

#include "cuset/trainer/tokenizer.hpp"

namespace cuset::detail {
namespace {

constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// A code point's class as the patterns see it. Newline (\r, \n) and Space (U+0020) are whitespace too.
enum Cls : std::uint8_t { Letter, Number, Newline, Space, OtherSpace, Other };

bool isWhitespace(Cls c) { return c == Newline || c == Space || c == OtherSpace; }

Cls classify(char32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return Letter;
    if (c >= '0' && c <= '9') return Number;
    if (c == '\n' || c == '\r') return Newline;
    if (c == ' ') return Space;
    if (c == '\t' || c == '\v' || c == '\f') return OtherSpace;  // ICU's \s is the White_Space property
    return Other;
  }
  if (u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE)) return OtherSpace;  // NEL, NBSP, U+2028, ...
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return Letter;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return Number;
    default:
      return Other;
  }
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool decode(std::string_view s, std::vector<char32_t>& cps, std::vector<std::uint32_t>& offsets) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    offsets.push_back(static_cast<std::uint32_t>(i));
    const unsigned char b = p[i];
    if (b < 0x80) {
      cps.push_back(b);
      ++i;
      continue;
    }
    int len;
    char32_t c;
    if (b >= 0xC2 && b <= 0xDF)
      len = 2, c = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF)
      len = 3, c = b & 0x0F;
    else if (b >= 0xF0 && b <= 0xF4)
      len = 4, c = b & 0x07;
    else
      return false;
    if (i + static_cast<std::size_t>(len) > n) return false;
    for (int k = 1; k < len; ++k) {
      if ((p[i + static_cast<std::size_t>(k)] & 0xC0) != 0x80) return false;
      c = (c << 6) | (p[i + static_cast<std::size_t>(k)] & 0x3F);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF)) return false;
    cps.push_back(c);
    i += static_cast<std::size_t>(len);
  }
  offsets.push_back(static_cast<std::uint32_t>(n));
  return true;
}

// The code point as (?i) compares it: simple case folding (full folding would only matter for
// characters that fold to several letters, which cannot end a match on one pattern letter).
char32_t fold(char32_t c) {
  return c < 0x80 ? (c >= 'A' && c <= 'Z' ? c + 32 : c) : static_cast<char32_t>(u_foldCase(static_cast<UChar32>(c), U_FOLD_CASE_DEFAULT));
}

struct Scanner {
  const std::vector<char32_t>& cp;
  const std::vector<Cls>& cls;
  std::size_t n;

  bool is(std::size_t i, Cls c) const { return i < n && cls[i] == c; }
  bool ws(std::size_t i) const { return i < n && isWhitespace(cls[i]); }
  std::size_t run(std::size_t i, Cls c) const {
    while (i < n && cls[i] == c) ++i;
    return i;
  }
  std::size_t wsRun(std::size_t i) const {
    while (i < n && isWhitespace(cls[i])) ++i;
    return i;
  }

  // 's|'t|'re|'ve|'m|'ll|'d, optionally case-insensitive: the end, or 0.
  std::size_t contraction(std::size_t i, bool ignoreCase) const {
    if (cp[i] != '\'' || i + 1 >= n) return 0;
    auto at = [&](std::size_t k) { return ignoreCase ? fold(cp[k]) : cp[k]; };
    const char32_t a = at(i + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if (i + 2 < n) {
      const char32_t b = at(i + 2);
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    }
    return 0;
  }

  // \s*[\r\n]+ | \s+(?!\S) | \s+ at a whitespace character: the end.
  std::size_t whitespace(std::size_t i, bool newlineAlternative) const {
    const std::size_t w = wsRun(i);
    if (newlineAlternative) {
      // \s* backs off to the run's last newline, then [\r\n]+ takes it (and nothing after it).
      for (std::size_t p = w; p-- > i;) {
        if (cls[p] == Newline) return p + 1;
      }
    }
    if (w == n || w - i >= 2) return w == n ? w : w - 1;  // \s+(?!\S): leave the last space to the next word
    return w;                                             // \s+
  }

  // The end of the match that starts at `i` (always > i: the patterns match every character).
  std::size_t qwenStyle(std::size_t i, bool digitsUpTo3) const {
    if (std::size_t e = contraction(i, true)) return e;
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (cls[i] == Letter) return run(i, Letter);
    if (cls[i] != Newline && cls[i] != Number && is(i + 1, Letter)) return run(i + 1, Letter);
    // \p{N} or \p{N}{1,3}
    if (cls[i] == Number) {
      std::size_t e = i + 1;
      if (digitsUpTo3) {
        while (e < n && e < i + 3 && cls[e] == Number) ++e;
      }
      return e;
    }
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    std::size_t k = i;
    if (cls[i] == Space && is(i + 1, Other)) k = i + 1;
    if (cls[k] == Other) {
      std::size_t e = run(k, Other);
      return run(e, Newline);
    }
    return whitespace(i, true);
  }

  std::size_t gpt2Style(std::size_t i) const {
    if (std::size_t e = contraction(i, false)) return e;
    const std::size_t k = cls[i] == Space && i + 1 < n && !isWhitespace(cls[i + 1]) ? i + 1 : i;  // ' ?'
    if (cls[k] == Letter) return run(k, Letter);
    if (cls[k] == Number) return run(k, Number);
    if (cls[k] == Other) return run(k, Other);
    return whitespace(i, false);
  }
};

}  // namespace

std::optional<FastSplitter> FastSplitter::forPattern(std::string_view pattern) {
  if (pattern == kQwen2SplitPattern) return FastSplitter(Flavor::qwen2);
  if (pattern == kLlama3Pattern) return FastSplitter(Flavor::llama3);
  if (pattern == kGpt2SplitPattern) return FastSplitter(Flavor::gpt2);
  return std::nullopt;
}

bool FastSplitter::split(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) const {
  thread_local std::vector<char32_t> cps;
  thread_local std::vector<std::uint32_t> offsets;
  thread_local std::vector<Cls> classes;
  cps.clear();
  offsets.clear();
  classes.clear();
  if (!decode(text, cps, offsets)) return false;
  classes.reserve(cps.size());
  for (char32_t c : cps) classes.push_back(classify(c));
  const Scanner s{cps, classes, cps.size()};
  for (std::size_t i = 0; i < s.n;) {
    const std::size_t e = flavor_ == Flavor::gpt2 ? s.gpt2Style(i) : s.qwenStyle(i, flavor_ == Flavor::llama3);
    out.emplace_back(offsets[i], offsets[e]);
    i = e;
  }
  return true;
}

}  // namespace cuset::detail
