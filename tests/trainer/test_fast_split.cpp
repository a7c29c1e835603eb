// The hand-written pre-tokenizer against ICU's regex engine, on random text built from the characters
// where the patterns' classes are subtle: every split it makes must be the regex's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuset/trainer/tokenizer.hpp"
#include "fast_split.hpp"

namespace cuset {
namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The matches (and, as "Isolated" splitting does, the gaps between them) of `pattern` by ICU.
Ranges icuSplit(const icu::RegexPattern& pattern, const std::string& text) {
  const icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);
  std::vector<std::size_t> byteAt(static_cast<std::size_t>(u.length()) + 1, 0);
  std::size_t bytes = 0;
  for (int32_t i = 0; i < u.length();) {
    const UChar32 c = u.char32At(i);
    for (int32_t k = 0; k < U16_LENGTH(c); ++k) byteAt[static_cast<std::size_t>(i + k)] = bytes;
    bytes += static_cast<std::size_t>(U8_LENGTH(c));
    i += U16_LENGTH(c);
  }
  byteAt[static_cast<std::size_t>(u.length())] = bytes;
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> m(pattern.matcher(u, status));
  Ranges out;
  std::size_t last = 0;
  while (m->find(status) && U_SUCCESS(status)) {
    const std::size_t s = byteAt[static_cast<std::size_t>(m->start(status))], e = byteAt[static_cast<std::size_t>(m->end(status))];
    if (s > last) out.emplace_back(last, s);
    if (e > s) out.emplace_back(s, e);
    last = e;
  }
  if (last < text.size()) out.emplace_back(last, text.size());
  return out;
}

std::string utf8(char32_t c) {
  std::string out;
  icu::UnicodeString(static_cast<UChar32>(c)).toUTF8String(out);
  return out;
}

TEST(FastSplitter, SplitsExactlyAsTheRegexOnRandomText) {
  // Letters of every case kind, the contraction letters and what folds to them (long s, Kelvin sign),
  // digits and other numbers, every kind of space ICU does and does not count as \s, marks, symbols.
  const std::vector<char32_t> alphabet = {'a',   'Z',  's',  'S',  't',   'T',     'r',     'R',    'e',    'E',    'v',    'V',    'm',    'M',
                                          'l',   'L',  'd',  'D',  'x',   0x17F,   0x212A,  0xE9,   0x4E2D, 0x1C5,  0x2B0,  0x130,  0xFB06, 0x3B1,
                                          0x416, '\'', '\'', '\'', '0',   '7',     0x663,   0xBD,   0x216B, 0xFF11, ' ',    ' ',    ' ',    '\t',
                                          '\n',  '\r', '\f', '\v', 0xA0,  0x2028,  0x2029,  0x3000, 0x85,   0xFEFF, 0x200B, 0x1680, '!',    '(',
                                          '_',   '-',  '.',  '"',  0x301, 0x1F680, 0x1F3FD, 0x200D, 0x2014, 0xFF01};
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1), length(0, 24);
  for (const auto& [name, pattern] : std::vector<std::pair<std::string, std::string_view>>{
           {"qwen2", kQwen2SplitPattern}, {"llama3", kLlama3}, {"gpt2", detail::kGpt2SplitPattern}}) {
    const auto fast = detail::FastSplitter::forPattern(pattern);
    ASSERT_TRUE(fast) << name;
    UErrorCode status = U_ZERO_ERROR;
    UParseError parseError{};
    std::unique_ptr<icu::RegexPattern> regex(icu::RegexPattern::compile(
        icu::UnicodeString::fromUTF8(icu::StringPiece(pattern.data(), static_cast<int32_t>(pattern.size()))), 0, parseError, status));
    ASSERT_TRUE(U_SUCCESS(status)) << name;
    // CUSET_FUZZ_ROUNDS raises the count for a longer search (2M per pattern passed when this was written).
    const char* env = std::getenv("CUSET_FUZZ_ROUNDS");
    const int rounds = env && *env ? std::atoi(env) : 20000;
    int checked = 0;
    for (int round = 0; round < rounds; ++round) {
      std::string text;
      for (std::size_t i = length(rng); i > 0; --i) text += utf8(alphabet[pick(rng)]);
      Ranges got;
      ASSERT_TRUE(fast->split(text, got));
      const Ranges want = icuSplit(*regex, text);
      if (got != want) {
        auto show = [&](const Ranges& r) {
          std::string shown;
          for (const auto& [b, e] : r) shown += "[" + text.substr(b, e - b) + "]";
          return shown;
        };
        std::string codePoints;
        const icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);
        for (int32_t i = 0; i < u.length(); i += U16_LENGTH(u.char32At(i)))
          codePoints += fmt::format(" U+{:04X}", static_cast<unsigned>(u.char32At(i)));
        FAIL() << name << ": '" << text << "' (" << codePoints << ") splits differently; ICU: " << show(want) << " scanner: " << show(got);
      }
      ++checked;
    }
    EXPECT_EQ(checked, rounds);
  }
}

TEST(FastSplitter, LeavesMalformedUtf8AndUnknownPatternsToTheRegex) {
  const auto fast = detail::FastSplitter::forPattern(kQwen2SplitPattern);
  ASSERT_TRUE(fast);
  Ranges out;
  EXPECT_FALSE(fast->split("ab\xC3", out));        // truncated sequence
  EXPECT_FALSE(fast->split("\xED\xA0\x80", out));  // a surrogate
  EXPECT_FALSE(fast->split("\xC0\xAF", out));      // overlong
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(detail::FastSplitter::forPattern(R"(\p{L}+|\s+)"));
}

}  // namespace
}  // namespace cuset
