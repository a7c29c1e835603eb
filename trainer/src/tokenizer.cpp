#include "cuset/trainer/tokenizer.hpp"

#include <fmt/format.h>
#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/thread_pool.hpp"
#include "fast_split.hpp"

namespace cuset {
namespace {

constexpr std::string_view kGpt2SplitPattern = detail::kGpt2SplitPattern;

std::string codePointToUtf8(UChar32 c) {
  std::string out;
  icu::UnicodeString(c).toUTF8String(out);
  return out;
}

// GPT-2's reversible map from bytes to printable code points, used by every byte-level BPE.
struct ByteAlphabet {
  std::array<std::string, 256> byteToSymbol;
  std::unordered_map<UChar32, std::uint8_t> codePointToByte;
  ByteAlphabet() {
    std::vector<int> bs;
    for (int b = '!'; b <= '~'; ++b) bs.push_back(b);
    for (int b = 0xA1; b <= 0xAC; ++b) bs.push_back(b);
    for (int b = 0xAE; b <= 0xFF; ++b) bs.push_back(b);
    std::vector<int> cs = bs;
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      if (std::find(bs.begin(), bs.end(), b) == bs.end()) {
        bs.push_back(b);
        cs.push_back(256 + n++);
      }
    }
    for (std::size_t i = 0; i < bs.size(); ++i) {
      byteToSymbol[static_cast<std::size_t>(bs[i])] = codePointToUtf8(cs[i]);
      codePointToByte[cs[i]] = static_cast<std::uint8_t>(bs[i]);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

std::uint64_t pairKey(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

// Heterogeneous lookup: a piece (string_view) finds its cached encoding without a std::string copy.
struct PieceHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Replaces invalid UTF-8 with U+FFFD, as HF's byte-level decoder does.
std::string lossyUtf8(const std::string& bytes) {
  std::string out;
  icu::UnicodeString::fromUTF8(bytes).toUTF8String(out);
  return out;
}

}  // namespace

struct BpeTokenizer::Impl {
  std::unordered_map<std::string, std::int32_t> vocab;
  std::vector<std::string> idToToken;
  struct Merge {
    std::int32_t rank;
    std::int32_t merged;  // id of the token the pair becomes
  };
  std::unordered_map<std::uint64_t, Merge> merges;  // (left id, right id) -> merge
  std::array<std::int32_t, 256> byteIds{};          // the byte-level symbol of each byte; -1: not in the vocabulary
  struct Added {
    std::string content;
    std::int32_t id;
    bool special;
  };
  std::vector<Added> added;                                     // longest first, for matching
  std::array<std::vector<const Added*>, 256> addedByFirstByte;  // the same, by first byte: most text bytes start none
  std::map<std::int32_t, std::size_t> addedById;
  bool nfc = false;
  bool ignoreMerges = false;
  // The splitting pre-tokenizers in order (HF's Sequence): each splits every piece the one before made,
  // "Isolated" (matches and the gaps between them both become pieces).
  struct SplitStep {
    std::unique_ptr<icu::RegexPattern> regex;
    std::optional<detail::FastSplitter> fast;  // the same pattern without the regex engine, when it is a known one
  };
  std::vector<SplitStep> splits;
  nlohmann::json json;
  using Pieces = std::vector<std::pair<std::int32_t, std::uint32_t>>;  // (token id, byte length)
  // Encodings of pieces seen before, in shards with a lock each, so threads of encodeBatch rarely wait.
  struct CacheShard {
    std::mutex mutex;
    std::unordered_map<std::string, Pieces, PieceHash, std::equal_to<>> map;
  };
  static constexpr std::size_t kCacheShards = 64;
  static constexpr std::size_t kCachePerShard = 4096;
  mutable std::array<CacheShard, kCacheShards> cache;

  void addSplitPattern(std::string_view pattern, const std::string& source) {
    UErrorCode status = U_ZERO_ERROR;
    UParseError parseError{};
    SplitStep step;
    step.regex.reset(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(icu::StringPiece(pattern.data(), static_cast<int32_t>(pattern.size()))),
                                                0, parseError, status));
    if (U_FAILURE(status)) throw makeError("{}: the pre-tokenizer regex does not compile in ICU: {}", source, u_errorName(status));
    step.fast = detail::FastSplitter::forPattern(pattern);
    splits.push_back(std::move(step));
  }

  void indexAddedTokens() {
    for (auto& list : addedByFirstByte) list.clear();
    for (const auto& a : added) {
      if (!a.content.empty()) addedByFirstByte[static_cast<unsigned char>(a.content[0])].push_back(&a);
    }
  }

  // BPE on one pre-token over token ids: the lowest-ranked adjacent pair merges first, as HF does.
  // Appends (token id, byte length) pairs to `out`.
  void bpe(std::string_view piece, Pieces& out) const {
    CacheShard& shard = cache[PieceHash{}(piece) % kCacheShards];
    {
      std::lock_guard lock(shard.mutex);
      if (auto it = shard.map.find(piece); it != shard.map.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    Pieces symbols;
    symbols.reserve(piece.size());
    for (unsigned char b : piece) {
      if (byteIds[b] < 0) throw makeError("tokenizer: the byte-level symbol of byte 0x{:02x} is not in the vocabulary", b);
      symbols.emplace_back(byteIds[b], 1);
    }
    bool whole = false;
    if (ignoreMerges && symbols.size() > 1) {
      std::string text;
      for (unsigned char b : piece) text += alphabet().byteToSymbol[b];
      if (auto it = vocab.find(text); it != vocab.end()) {
        symbols = {{it->second, static_cast<std::uint32_t>(piece.size())}};
        whole = true;
      }
    }
    if (!whole && symbols.size() > 1) {
      auto rankOf = [&](std::size_t i) -> const Merge* {
        auto it = merges.find(pairKey(symbols[i].first, symbols[i + 1].first));
        return it == merges.end() ? nullptr : &it->second;
      };
      std::vector<const Merge*> pairs(symbols.size() - 1);  // pairs[i]: the merge of symbols i and i+1
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) pairs[i] = rankOf(i);
      for (;;) {
        std::size_t at = pairs.size();
        for (std::size_t i = 0; i < pairs.size(); ++i) {
          if (pairs[i] && (at == pairs.size() || pairs[i]->rank < pairs[at]->rank)) at = i;
        }
        if (at == pairs.size()) break;
        symbols[at] = {pairs[at]->merged, symbols[at].second + symbols[at + 1].second};
        symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(at) + 1);
        pairs.erase(pairs.begin() + static_cast<std::ptrdiff_t>(at));
        if (at < pairs.size()) pairs[at] = rankOf(at);
        if (at > 0) pairs[at - 1] = rankOf(at - 1);
      }
    }
    out.insert(out.end(), symbols.begin(), symbols.end());
    std::lock_guard lock(shard.mutex);
    if (shard.map.size() < kCachePerShard) shard.map.emplace(std::string(piece), std::move(symbols));
  }

  void encodeSegment(std::string_view segment, std::size_t base, Encoding& out) const { splitAndEncode(segment, base, 0, out); }

  // Step `step` of the split chain on `piece` (at byte `base` of the text); past the last step, BPE.
  void splitAndEncode(std::string_view piece, std::size_t base, std::size_t step, Encoding& out) const {
    if (step == splits.size()) {
      thread_local Pieces pieces;
      pieces.clear();
      bpe(piece, pieces);
      std::size_t pos = base;
      for (const auto& [id, bytes] : pieces) {
        out.ids.push_back(id);
        out.spans.emplace_back(pos, pos + bytes);
        pos += bytes;
      }
      return;
    }
    const SplitStep& split = splits[step];
    auto emit = [&](std::size_t begin, std::size_t end) { splitAndEncode(piece.substr(begin, end - begin), base + begin, step + 1, out); };
    if (split.fast) {
      std::vector<std::pair<std::size_t, std::size_t>> matches;  // not thread_local: the next step runs inside the loop
      if (split.fast->split(piece, matches)) {
        for (const auto& [b, e] : matches) emit(b, e);  // the known patterns match every character: no gaps
        return;
      }
    }
    const icu::UnicodeString text = icu::UnicodeString::fromUTF8(icu::StringPiece(piece.data(), static_cast<int32_t>(piece.size())));
    // UTF-16 index -> UTF-8 byte offset
    std::vector<std::size_t> byteAt(static_cast<std::size_t>(text.length()) + 1, 0);
    std::size_t bytes = 0;
    for (int32_t i = 0; i < text.length();) {
      const UChar32 c = text.char32At(i);
      const int32_t units = U16_LENGTH(c);
      for (int32_t k = 0; k < units; ++k) byteAt[static_cast<std::size_t>(i + k)] = bytes;
      bytes += static_cast<std::size_t>(U8_LENGTH(c));
      i += units;
    }
    byteAt[static_cast<std::size_t>(text.length())] = bytes;
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> matcher(split.regex->matcher(text, status));
    std::size_t last = 0;
    while (matcher->find(status) && U_SUCCESS(status)) {
      const std::size_t s = byteAt[static_cast<std::size_t>(matcher->start(status))];
      const std::size_t e = byteAt[static_cast<std::size_t>(matcher->end(status))];
      if (s > last) emit(last, s);  // "Isolated": the gap is a piece of its own
      if (e > s) emit(s, e);
      last = e;
    }
    if (last < piece.size()) emit(last, piece.size());
  }
};

namespace {

// null, NFC, or a Sequence of those (DeepSeek's files carry an empty Sequence): anything else would
// change the text in a way this tokenizer does not reproduce, so it is refused by name.
void readNormalizer(BpeTokenizer::Impl& impl, const nlohmann::json& normalizer, const std::string& source) {
  if (normalizer.is_null()) return;
  const std::string type = normalizer.value("type", "");
  if (type == "NFC") {
    impl.nfc = true;
  } else if (type == "Sequence") {
    for (const auto& n : normalizer.at("normalizers")) readNormalizer(impl, n, source);
  } else {
    throw makeError("{}: normalizer '{}' is not supported (NFC, a Sequence of NFC, or none)", source, type);
  }
}

}  // namespace

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeTokenizer::BpeTokenizer(BpeTokenizer&&) noexcept = default;
BpeTokenizer& BpeTokenizer::operator=(BpeTokenizer&&) noexcept = default;
BpeTokenizer::~BpeTokenizer() = default;

BpeTokenizer BpeTokenizer::load(const std::filesystem::path& path) { return fromJson(readJsonFile(path), path.string()); }

BpeTokenizer BpeTokenizer::fromJson(nlohmann::json document, const std::string& source) {
  auto impl = std::make_unique<Impl>();
  // Kept for toJson() and save(); moved, not copied: Qwen's tokenizer.json is an 11 MB document.
  impl->json = std::move(document);
  const nlohmann::json& j = impl->json;
  try {
    if (!j.is_object() || !j.contains("model")) throw makeError("{}: no 'model' object: is this a tokenizer.json?", source);
    const auto& model = j.at("model");
    if (model.value("type", "BPE") != "BPE") {
      throw makeError("{}: model.type is '{}'; only byte-level BPE tokenizers are supported", source, model.value("type", ""));
    }
    if (!model.contains("merges")) throw makeError("{}: tokenizer.json has no model.merges: is this a WordPiece or Unigram tokenizer?", source);
    if (model.value("byte_fallback", false)) throw makeError("{}: byte_fallback BPE (SentencePiece style) is not supported", source);
    if (!model.value("continuing_subword_prefix", nlohmann::json("")).is_null() && !model.value("continuing_subword_prefix", std::string()).empty()) {
      throw makeError("{}: continuing_subword_prefix is not supported", source);
    }
    impl->ignoreMerges = model.value("ignore_merges", false);
    impl->vocab.reserve(model.at("vocab").size() + 1024);
    if (model.at("merges").is_array()) impl->merges.reserve(model.at("merges").size());
    for (const auto& [token, id] : model.at("vocab").items()) {
      const auto i = static_cast<std::int32_t>(jsonInteger(id, fmt::format("{}: model.vocab['{}']", source, validUtf8(token)), 0, 10'000'000));
      impl->vocab[token] = i;
      if (impl->idToToken.size() <= static_cast<std::size_t>(i)) impl->idToToken.resize(static_cast<std::size_t>(i) + 1);
      impl->idToToken[static_cast<std::size_t>(i)] = token;
    }
    std::int32_t rank = 0;
    for (const auto& m : model.at("merges")) {
      std::string a, b;
      if (m.is_string()) {  // "a b"
        const std::string s = m.get<std::string>();
        const auto space = s.find(' ');
        if (space == std::string::npos) throw makeError("{}: merge '{}' has no space", source, s);
        a = s.substr(0, space);
        b = s.substr(space + 1);
      } else {  // ["a", "b"]
        a = m.at(0).get<std::string>();
        b = m.at(1).get<std::string>();
      }
      const auto ia = impl->vocab.find(a), ib = impl->vocab.find(b), iab = impl->vocab.find(a + b);
      if (ia == impl->vocab.end() || ib == impl->vocab.end() || iab == impl->vocab.end()) {
        throw makeError("{}: merge {} ('{}' + '{}') names a token that is not in model.vocab", source, rank, a, b);
      }
      impl->merges.emplace(pairKey(ia->second, ib->second), Impl::Merge{rank, iab->second});  // the first rank of a repeated pair wins
      ++rank;
    }
    for (int byte = 0; byte < 256; ++byte) {
      auto it = impl->vocab.find(alphabet().byteToSymbol[static_cast<std::size_t>(byte)]);
      impl->byteIds[static_cast<std::size_t>(byte)] = it == impl->vocab.end() ? -1 : it->second;
    }
    if (j.contains("added_tokens")) {
      for (const auto& t : j.at("added_tokens")) {
        Impl::Added a{t.at("content").get<std::string>(),
                      static_cast<std::int32_t>(jsonInteger(t.at("id"), source + ": added_tokens id", 0, 10'000'000)), t.value("special", false)};
        if (impl->idToToken.size() <= static_cast<std::size_t>(a.id)) impl->idToToken.resize(static_cast<std::size_t>(a.id) + 1);
        impl->idToToken[static_cast<std::size_t>(a.id)] = a.content;
        impl->vocab[a.content] = a.id;
        impl->added.push_back(std::move(a));
      }
      std::sort(impl->added.begin(), impl->added.end(), [](const auto& x, const auto& y) { return x.content.size() > y.content.size(); });
      for (std::size_t i = 0; i < impl->added.size(); ++i) impl->addedById[impl->added[i].id] = i;
      impl->indexAddedTokens();
    }
    readNormalizer(*impl, j.value("normalizer", nlohmann::json()), source);
    const auto& pre = j.value("pre_tokenizer", nlohmann::json());
    std::vector<nlohmann::json> steps;
    if (pre.is_object() && pre.value("type", "") == "Sequence") {
      for (const auto& s : pre.at("pretokenizers")) steps.push_back(s);
    } else if (!pre.is_null()) {
      steps.push_back(pre);
    }
    for (const auto& s : steps) {
      const std::string type = s.value("type", "");
      if (type == "Split") {
        if (!s.at("pattern").contains("Regex")) throw makeError("{}: Split pre-tokenizer without a Regex pattern is not supported", source);
        if (s.value("behavior", "") != "Isolated" || s.value("invert", false)) {
          throw makeError("{}: Split pre-tokenizer behaviour '{}' is not supported (Isolated)", source, s.value("behavior", ""));
        }
        impl->addSplitPattern(s.at("pattern").at("Regex").get<std::string>(), source);
      } else if (type == "Digits") {
        // HF: each char::is_numeric (general category N*) alone, or runs of them; both isolated.
        impl->addSplitPattern(s.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", source);
      } else if (type == "ByteLevel") {
        if (s.value("add_prefix_space", false)) throw makeError("{}: ByteLevel add_prefix_space is not supported", source);
        if (s.value("use_regex", true)) impl->addSplitPattern(kGpt2SplitPattern, source);
      } else {
        throw makeError("{}: pre-tokenizer '{}' is not supported (Split, Digits, ByteLevel)", source, type);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw makeError("{}: malformed tokenizer.json: {}", source, e.what());
  }
  return BpeTokenizer(std::move(impl));
}

Encoding BpeTokenizer::encode(std::string_view input, bool parseSpecial) const {
  std::string normalized;
  std::string_view text = input;
  // ASCII is always NFC; other text is checked in UTF-8 and converted only when it is not NFC.
  const bool ascii = std::all_of(input.begin(), input.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (impl_->nfc && !ascii) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
    const icu::StringPiece piece(input.data(), static_cast<int32_t>(input.size()));
    if (U_SUCCESS(status) && !nfc->isNormalizedUTF8(piece, status)) {
      status = U_ZERO_ERROR;
      const icu::UnicodeString u = icu::UnicodeString::fromUTF8(piece);
      nfc->normalize(u, status).toUTF8String(normalized);
      text = normalized;
    }
  }
  Encoding out;
  out.ids.reserve(input.size() / 3);
  out.spans.reserve(input.size() / 3);
  std::size_t segmentStart = 0, pos = 0;
  while (pos < text.size()) {
    const Impl::Added* match = nullptr;
    if (parseSpecial) {
      for (const Impl::Added* a : impl_->addedByFirstByte[static_cast<unsigned char>(text[pos])]) {
        if (text.compare(pos, a->content.size(), a->content) == 0) {
          match = a;
          break;  // longest first
        }
      }
    }
    if (!match) {
      ++pos;
      continue;
    }
    if (pos > segmentStart) impl_->encodeSegment(text.substr(segmentStart, pos - segmentStart), segmentStart, out);
    out.ids.push_back(match->id);
    out.spans.emplace_back(pos, pos + match->content.size());
    pos += match->content.size();
    segmentStart = pos;
  }
  if (segmentStart < text.size()) impl_->encodeSegment(text.substr(segmentStart), segmentStart, out);
  return out;
}

std::vector<Encoding> BpeTokenizer::encodeBatch(std::span<const std::string_view> texts, std::size_t threads, bool parseSpecial) const {
  std::vector<Encoding> out(texts.size());
  parallelChunks(texts.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = encode(texts[i], parseSpecial);
  });
  return out;
}

std::string BpeTokenizer::decode(std::span<const std::int32_t> ids, bool skipSpecial) const {
  // HF's byte-level decoder: a token all of whose characters are byte symbols becomes those bytes;
  // any other token (a special token with characters outside the byte alphabet) its own UTF-8. Added
  // tokens go through the same rule, so an added token spelled in byte symbols decodes to raw bytes.
  std::string bytes;
  for (std::int32_t id : ids) {
    const std::string* token = nullptr;
    if (auto it = impl_->addedById.find(id); it != impl_->addedById.end()) {
      if (skipSpecial && impl_->added[it->second].special) continue;
      token = &impl_->added[it->second].content;
    } else if (id >= 0 && static_cast<std::size_t>(id) < impl_->idToToken.size()) {
      token = &impl_->idToToken[static_cast<std::size_t>(id)];
    } else {
      throw makeError("decode: token id {} is out of range", id);
    }
    const icu::UnicodeString symbol = icu::UnicodeString::fromUTF8(*token);
    std::string mapped;
    bool allBytes = true;
    for (int32_t i = 0; i < symbol.length() && allBytes;) {
      const UChar32 c = symbol.char32At(i);
      auto b = alphabet().codePointToByte.find(c);
      if (b == alphabet().codePointToByte.end()) {
        allBytes = false;
      } else {
        mapped += static_cast<char>(b->second);
      }
      i += U16_LENGTH(c);
    }
    bytes += allBytes ? mapped : *token;
  }
  return lossyUtf8(bytes);
}

std::size_t BpeTokenizer::vocabSize() const { return impl_->idToToken.size(); }

std::int32_t BpeTokenizer::tokenId(std::string_view token) const {
  auto it = impl_->vocab.find(std::string(token));
  return it == impl_->vocab.end() ? -1 : it->second;
}

nlohmann::json BpeTokenizer::toJson() const { return impl_->json; }

void BpeTokenizer::save(const std::filesystem::path& path) const { writeFileAtomic(path, impl_->json.dump(2) + "\n"); }

BpeTokenizer trainBpeTokenizer(const std::vector<std::string>& texts, std::size_t vocabSize, const std::vector<std::string>& specialTokens) {
  // Pre-tokenise with an empty-vocabulary tokenizer's splitter and count the pieces.
  auto splitter = std::make_unique<BpeTokenizer::Impl>();
  splitter->addSplitPattern(kQwen2SplitPattern, "trainer");
  std::map<std::string, std::int64_t> pieceCounts;
  for (const auto& text : texts) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);
    std::unique_ptr<icu::RegexMatcher> m(splitter->splits.front().regex->matcher(u, status));
    while (m->find(status) && U_SUCCESS(status)) {
      std::string piece;
      u.tempSubStringBetween(m->start(status), m->end(status)).toUTF8String(piece);
      ++pieceCounts[piece];
    }
  }
  std::vector<std::string> tokens;  // id -> token text
  for (int b = 0; b < 256; ++b) tokens.push_back(alphabet().byteToSymbol[static_cast<std::size_t>(b)]);
  struct Word {
    std::vector<std::string> symbols;
    std::int64_t count;
  };
  std::vector<Word> words;
  for (const auto& [piece, count] : pieceCounts) {
    Word w{{}, count};
    for (unsigned char b : piece) w.symbols.push_back(alphabet().byteToSymbol[b]);
    words.push_back(std::move(w));
  }
  std::vector<std::pair<std::string, std::string>> merges;
  while (tokens.size() + specialTokens.size() < vocabSize) {
    std::map<std::pair<std::string, std::string>, std::int64_t> pairs;
    for (const auto& w : words) {
      for (std::size_t i = 0; i + 1 < w.symbols.size(); ++i) pairs[{w.symbols[i], w.symbols[i + 1]}] += w.count;
    }
    if (pairs.empty()) break;
    // The most frequent pair; ties go to the smallest pair, so training is deterministic.
    auto best = std::max_element(pairs.begin(), pairs.end(),
                                 [](const auto& x, const auto& y) { return x.second < y.second || (x.second == y.second && x.first > y.first); });
    const auto [a, b] = best->first;
    merges.emplace_back(a, b);
    tokens.push_back(a + b);
    for (auto& w : words) {
      for (std::size_t i = 0; i + 1 < w.symbols.size();) {
        if (w.symbols[i] == a && w.symbols[i + 1] == b) {
          w.symbols[i] += b;
          w.symbols.erase(w.symbols.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        } else {
          ++i;
        }
      }
    }
  }
  nlohmann::json vocab = nlohmann::json::object();
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
  nlohmann::json mergeList = nlohmann::json::array();
  for (const auto& [a, b] : merges) mergeList.push_back({a, b});
  nlohmann::json added = nlohmann::json::array();
  for (std::size_t i = 0; i < specialTokens.size(); ++i) {
    added.push_back({{"id", tokens.size() + i},
                     {"content", specialTokens[i]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  const nlohmann::json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  nlohmann::json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", std::string(kQwen2SplitPattern)}}}, {"behavior", "Isolated"}, {"invert", false}}, byteLevel}}}},
      {"post_processor", byteLevel},
      {"decoder", byteLevel},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", mergeList}}},
  };
  return BpeTokenizer::fromJson(std::move(j), "trained tokenizer");
}

}  // namespace cuset
