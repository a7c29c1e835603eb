#pragma once
// The pre-tokenizer split patterns of GPT-2, Llama 3 and Qwen 2 (also Qwen 2.5 and 3), recognised by
// their exact text and run as a hand-written scanner instead of ICU's regex engine (several times
// faster; tokenizer parity is unchanged). The scanner reproduces the regex's leftmost-alternative,
// greedy-with-backtracking semantics and ICU's character classes: \p{L} and \p{N} by general
// category, \s by the White_Space property (as ICU implements it: \v and U+0085 included, though its
// documentation says [\t\n\f\r\p{Z}]), and (?i) by case folding. tests/trainer/test_tokenizer.cpp checks it
// against ICU on random text. Private to the tokenizer.
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset::detail {

// GPT-2's split pattern (ByteLevel with use_regex). Qwen 2's is cuset::kQwen2SplitPattern.
inline constexpr std::string_view kGpt2SplitPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class FastSplitter {
 public:
  enum class Flavor { gpt2, llama3, qwen2 };

  // The scanner for `pattern`, or nullopt when it is not one of the known patterns.
  static std::optional<FastSplitter> forPattern(std::string_view pattern);
  explicit FastSplitter(Flavor flavor) : flavor_(flavor) {}

  // The byte ranges [begin, end) of the pattern's matches in `text`, in order, appended to `out`.
  // false (out unchanged) when `text` is not valid UTF-8: the caller takes the regex path, which
  // treats malformed bytes its own way.
  bool split(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) const;

 private:
  Flavor flavor_;
};

}  // namespace cuset::detail
