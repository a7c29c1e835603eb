#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cuset/trainer/tokenizer.hpp"
#include "test_util.hpp"
#include <cstdint>

namespace cuset {
namespace {

const std::vector<std::string> kCorpus = {
    "extern \"C\" __global__ void relu(const float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n",
    "__global__ void add(const float* a, const float* b, float* c, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n}\n",
    "Write a CUDA kernel that computes the row-wise softmax of a matrix.",
};

BpeTokenizer trained() { return trainBpeTokenizer(kCorpus, 320, {"<|im_start|>", "<|im_end|>"}); }

TEST(BpeTrainer, LearnsMergesAndRoundTripsThroughTokenizerJson) {
  test::TempDir dir;
  const BpeTokenizer t = trained();
  EXPECT_EQ(t.vocabSize(), 320u);
  EXPECT_GE(t.tokenId("<|im_end|>"), 256);
  t.save(dir / "tokenizer.json");
  const BpeTokenizer loaded = BpeTokenizer::load(dir / "tokenizer.json");
  const std::string text = "<|im_start|>int i = blockIdx.x * blockDim.x + threadIdx.x; // ünïcödé 🚀<|im_end|>";
  const Encoding a = t.encode(text), b = loaded.encode(text);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(loaded.decode(a.ids), text);
  EXPECT_EQ(a.ids.front(), t.tokenId("<|im_start|>"));
  // Merges learned from CUDA code compress it: far fewer tokens than bytes.
  const Encoding code = t.encode("int i = blockIdx.x * blockDim.x + threadIdx.x;");
  EXPECT_LT(code.ids.size(), 20u);
  // Training is deterministic.
  EXPECT_EQ(trained().toJson().dump(), t.toJson().dump());
}

TEST(BpeTokenizer, SpansCoverTheInputInOrder) {
  const BpeTokenizer t = trained();
  const std::string text = "  if (i < n) y[i] = x[i];<|im_end|>\n\nçà 🚀";
  const Encoding e = t.encode(text);
  ASSERT_EQ(e.ids.size(), e.spans.size());
  std::size_t pos = 0;
  std::string rebuilt;
  for (std::size_t k = 0; k < e.ids.size(); ++k) {
    EXPECT_EQ(e.spans[k].first, pos);
    EXPECT_GT(e.spans[k].second, e.spans[k].first);
    pos = e.spans[k].second;
  }
  EXPECT_EQ(pos, text.size());
  // The special token's span is exactly its text.
  const auto special = std::find(e.ids.begin(), e.ids.end(), t.tokenId("<|im_end|>")) - e.ids.begin();
  const auto [b, end] = e.spans[static_cast<std::size_t>(special)];
  EXPECT_EQ(text.substr(b, end - b), "<|im_end|>");
}

TEST(BpeTokenizer, SpecialTokensAreTextWhenNotParsedAndSkippableInDecode) {
  const BpeTokenizer t = trained();
  const Encoding parsed = t.encode("a<|im_end|>b");
  const Encoding literal = t.encode("a<|im_end|>b", false);
  EXPECT_LT(parsed.ids.size(), literal.ids.size());
  EXPECT_EQ(t.decode(literal.ids), "a<|im_end|>b");
  EXPECT_EQ(t.decode(parsed.ids, true), "ab");
}

TEST(BpeTokenizer, DecodeOfAPartialCharacterIsLossyNotACrash) {
  const BpeTokenizer t = trained();
  const Encoding e = t.encode("🚀");
  ASSERT_GT(e.ids.size(), 1u);  // four bytes, no merge for them in this small vocabulary
  const std::vector<std::int32_t> half(e.ids.begin(), e.ids.begin() + 1);
  EXPECT_EQ(t.decode(half), "\xEF\xBF\xBD");  // U+FFFD
  EXPECT_THROW(t.decode(std::vector<std::int32_t>{999999}), Error);
}

TEST(BpeTokenizer, UnsupportedOrMalformedFilesSayWhy) {
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(nlohmann::json{{"model", {{"type", "WordPiece"}}}}, "tok.json"), "tok.json", "only byte-level BPE");
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(nlohmann::json{{"model", {{"type", "BPE"}, {"vocab", nlohmann::json::object()}}}}, "tok.json"),
                          "no model.merges", "WordPiece");
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(nlohmann::json::array(), "tok.json"), "is this a tokenizer.json");
  nlohmann::json j = trained().toJson();
  j["normalizer"] = {{"type", "NFKC"}};
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(j, "tok.json"), "normalizer 'NFKC' is not supported");
  j = trained().toJson();
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}}}};
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(j, "tok.json"), "normalizer 'Lowercase' is not supported");
  j = trained().toJson();
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Metaspace"}}, {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(j, "tok.json"), "tok.json", "pre-tokenizer 'Metaspace' is not supported");
  j = trained().toJson();
  j["model"]["merges"][0] = 5;
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::fromJson(j, "tok.json"), "malformed tokenizer.json");
  test::TempDir dir;
  test::writeText(dir / "broken.json", "{\"model\": ");
  CUSET_EXPECT_THROW_WITH(BpeTokenizer::load(dir / "broken.json"), "broken.json", "invalid JSON");
}

// DeepSeek's shape: several splitting steps in sequence, each splitting the pieces of the one before;
// BPE never merges across a piece boundary. (Byte-exact parity with HF on the real files:
// TokenizerParity.RealTokenizersAgainstHuggingFaceTokenizers.)
TEST(BpeTokenizer, SplitStepsInSequenceEachSplitThePiecesBefore) {
  nlohmann::json j = trained().toJson();
  const auto split = [](const char* regex) {
    return nlohmann::json{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}};
  };
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", nlohmann::json::array()}};
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {split("\\p{N}{1,3}"),
                          split("\\s+"),
                          {{"type", "Digits"}, {"individual_digits", false}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  const BpeTokenizer chained = BpeTokenizer::fromJson(j, "chain");
  const std::string text = "ab 1234567 cd";
  const Encoding e = chained.encode(text);
  // Pieces: "ab", " ", "123", "456", "7", " ", "cd": no token spans two of them.
  const std::vector<std::size_t> boundaries = {2, 3, 6, 9, 10, 11};
  for (const auto& [b, end] : e.spans) {
    for (std::size_t cut : boundaries) EXPECT_FALSE(b < cut && cut < end) << "a token spans byte " << cut << ": [" << b << ", " << end << ")";
  }
  EXPECT_EQ(chained.decode(e.ids), text);
}

TEST(BpeTokenizer, DecodeMapsTokensAsHuggingFacesByteLevelDecoderDoes) {
  // An added token spelled in byte symbols ("õ" is byte 0xF5's symbol) decodes to that byte: invalid
  // UTF-8 alone, so U+FFFD, as tokenizers gives for DeepSeek-Coder's added "õ". Others keep their text.
  nlohmann::json j = trained().toJson();
  const auto nextId = static_cast<std::int32_t>(trained().vocabSize());
  j["added_tokens"].push_back({{"id", nextId}, {"content", "õ"}, {"special", false}});
  j["added_tokens"].push_back({{"id", nextId + 1}, {"content", "<｜begin▁of▁sentence｜>"}, {"special", true}});
  const BpeTokenizer t = BpeTokenizer::fromJson(j, "added");
  const std::vector<std::int32_t> ids = {nextId, nextId + 1};
  EXPECT_EQ(t.decode(ids), "\xEF\xBF\xBD<｜begin▁of▁sentence｜>");
  EXPECT_EQ(t.decode(ids, true), "\xEF\xBF\xBD");
}

TEST(BpeTokenizer, AcceptsBothMergeFormats) {
  nlohmann::json j = trained().toJson();
  nlohmann::json asStrings = nlohmann::json::array();
  for (const auto& m : j["model"]["merges"]) asStrings.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
  nlohmann::json k = j;
  k["model"]["merges"] = asStrings;
  const std::string text = "threadIdx.x + blockIdx.x";
  EXPECT_EQ(BpeTokenizer::fromJson(j, "a").encode(text).ids, BpeTokenizer::fromJson(k, "b").encode(text).ids);
}

}  // namespace
}  // namespace cuset
