#pragma once
// Byte-level BPE tokenizers in Hugging Face's tokenizer.json format (GPT-2, Llama-3, Qwen2/3 style):
// NFC normalizer, regex split pre-tokenizer (ICU, so \p{L}, \p{N} and lookahead work as in HF),
// byte-level alphabet, ranked merges (both file formats), added/special tokens matched before
// splitting, byte-level decoder. Plus a trainer that learns merges and writes the same format.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset {

struct Encoding {
  std::vector<std::int32_t> ids;
  // Byte offsets [begin, end) of each token in the (NFC-normalised) UTF-8 input. A token that covers
  // part of a multi-byte character gets the bytes it covers.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
};

class BpeTokenizer {
 public:
  // Throws cuset::Error naming the file and what is unsupported or malformed ("tokenizer.json has no
  // model.merges: is this a WordPiece tokenizer?").
  static BpeTokenizer load(const std::filesystem::path& path);
  static BpeTokenizer fromJson(nlohmann::json json, const std::string& source);

  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer&&) noexcept;
  ~BpeTokenizer();

  // No special tokens are added; added tokens in the text are recognised when `parseSpecial`.
  Encoding encode(std::string_view text, bool parseSpecial = true) const;
  // encode() of each text, on `threads` threads (0: one per core); results in input order. The
  // tokenizer is safe to share: its piece cache takes a shared lock to read.
  std::vector<Encoding> encodeBatch(std::span<const std::string_view> texts, std::size_t threads = 0, bool parseSpecial = true) const;
  std::string decode(std::span<const std::int32_t> ids, bool skipSpecial = false) const;

  std::size_t vocabSize() const;
  std::int32_t tokenId(std::string_view token) const;  // -1 if absent
  nlohmann::json toJson() const;
  void save(const std::filesystem::path& path) const;  // atomic

  struct Impl;

 private:
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend BpeTokenizer trainBpeTokenizer(const std::vector<std::string>&, std::size_t, const std::vector<std::string>&);
};

// The Qwen2 / Llama-3 pre-tokenizer split pattern.
inline constexpr std::string_view kQwen2SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Learns merges over `texts` until the vocabulary (256 byte symbols + merges + special tokens) reaches
// `vocabSize`, with the Qwen2 split pattern and NFC, and returns a tokenizer that save() writes as a
// tokenizer.json the loader (and HF) reads.
BpeTokenizer trainBpeTokenizer(const std::vector<std::string>& texts, std::size_t vocabSize, const std::vector<std::string>& specialTokens);

}  // namespace cuset
