#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cuset/trainer/safetensors.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

namespace st = safetensors;

std::span<const std::byte> bytesOf(const std::vector<float>& v) { return std::as_bytes(std::span(v)); }

// A file assembled by hand from the format's definition, independent of our writer.
std::string handMade(const std::string& header, const std::string& data) {
  const std::uint64_t n = header.size();
  return std::string(reinterpret_cast<const char*>(&n), 8) + header + data;
}

TEST(Safetensors, ReadsAHandMadeFile) {
  test::TempDir dir;
  const float values[3] = {1.0f, -2.5f, 3.25f};
  const std::string data(reinterpret_cast<const char*>(values), sizeof(values));
  test::writeText(dir / "a.safetensors", handMade(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},"__metadata__":{"format":"pt"}})", data));
  const auto f = st::File::open(dir / "a.safetensors");
  ASSERT_EQ(f.tensors().size(), 1u);
  const auto* w = f.find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, std::vector<std::int64_t>{3});
  EXPECT_EQ(std::memcmp(w->data.data(), values, sizeof(values)), 0);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.find("missing"), nullptr);
}

TEST(Safetensors, WriteThenReadRoundTripsBitwise) {
  test::TempDir dir;
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {-0.0f, 1e-30f};
  std::vector<std::uint16_t> h = {0x3c00, 0x7c00, 0x8001};
  st::write(dir / "m.safetensors",
            {{"model.layers.0.weight", st::DType::F32, {2, 3}, bytesOf(a)},
             {"lm_head.weight", st::DType::F32, {2}, bytesOf(b)},
             {"h", st::DType::F16, {3}, std::as_bytes(std::span(h))}},
            {{"format", "pt"}});
  const auto f = st::File::open(dir / "m.safetensors");
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(std::memcmp(f.find("model.layers.0.weight")->data.data(), a.data(), 24), 0);
  EXPECT_EQ(std::memcmp(f.find("lm_head.weight")->data.data(), b.data(), 8), 0);
  EXPECT_EQ(f.find("h")->dtype, st::DType::F16);
  EXPECT_EQ(std::memcmp(f.find("h")->data.data(), h.data(), 6), 0);
  // HF aligns the data buffer to 8 bytes.
  const std::string raw = test::readText(dir / "m.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, raw.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(nlohmann::json::parse(raw.substr(8, n))["__metadata__"]["format"], "pt");
}

struct Corrupt {
  std::string header;
  std::size_t dataBytes;
  std::string needle;
  friend void PrintTo(const Corrupt& c, std::ostream* os) { *os << c.needle; }
};

class SafetensorsCorruption : public ::testing::TestWithParam<Corrupt> {};

TEST_P(SafetensorsCorruption, IsAClearErrorNamingTheFile) {
  test::TempDir dir;
  const auto path = dir / "bad.safetensors";
  test::writeText(path, handMade(GetParam().header, std::string(GetParam().dataBytes, '\0')));
  CUSET_EXPECT_THROW_WITH(st::File::open(path), "bad.safetensors", GetParam().needle);
}

INSTANTIATE_TEST_SUITE_P(
    Headers, SafetensorsCorruption,
    ::testing::Values(Corrupt{R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16, "need 12 bytes"},
                      Corrupt{R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", 8, "out of range"},
                      Corrupt{R"({"w":{"dtype":"Q4","shape":[3],"data_offsets":[0,12]}})", 12, "unsupported dtype 'Q4'"},
                      Corrupt{R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12,
                              "overlap"},
                      Corrupt{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8, "belong to no tensor"},
                      Corrupt{R"({"a":{"dtype":"F32","shape":[1]}})", 4, "malformed entry"},
                      Corrupt{R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "invalid shape"},
                      Corrupt{R"({"a": )", 0, "not valid JSON"}, Corrupt{R"([1, 2])", 0, "not a JSON object"},
                      Corrupt{R"({"__metadata__":{"x":1}})", 0, "not a string"}));

TEST(Safetensors, TruncatedAndTinyFiles) {
  test::TempDir dir;
  test::writeText(dir / "tiny.safetensors", "abc");
  CUSET_EXPECT_THROW_WITH(st::File::open(dir / "tiny.safetensors"), "tiny.safetensors", "not a safetensors file");
  const std::uint64_t huge = 1ull << 40;
  test::writeText(dir / "trunc.safetensors", std::string(reinterpret_cast<const char*>(&huge), 8) + "{}");
  CUSET_EXPECT_THROW_WITH(st::File::open(dir / "trunc.safetensors"), "does not fit the file");
  CUSET_EXPECT_THROW_WITH(st::File::open(dir / "absent.safetensors"), "absent.safetensors", "cannot open");
}

TEST(Safetensors, ShardedCheckpointFollowsTheIndex) {
  test::TempDir dir;
  const std::vector<float> a = {1, 2}, b = {3};
  st::write(dir / "model-00001-of-00002.safetensors", {{"a", st::DType::F32, {2}, bytesOf(a)}});
  st::write(dir / "model-00002-of-00002.safetensors", {{"b", st::DType::F32, {1}, bytesOf(b)}});
  test::writeText(
      dir / "model.safetensors.index.json",
      R"({"metadata": {"total_size": 12}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})");
  const auto c = st::Checkpoint::open(dir.path());
  EXPECT_EQ(c.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(reinterpret_cast<const float*>(c.find("b")->data.data())[0], 3.0f);
  test::writeText(dir / "model.safetensors.index.json",
                  R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})");
  CUSET_EXPECT_THROW_WITH(st::Checkpoint::open(dir.path()), "index lists 'c'");
  test::writeText(dir / "model.safetensors.index.json", R"({"weight_map": {"a": "../escape.safetensors"}})");
  CUSET_EXPECT_THROW_WITH(st::Checkpoint::open(dir.path()), "outside the checkpoint folder");
  test::TempDir empty;
  CUSET_EXPECT_THROW_WITH(st::Checkpoint::open(empty.path()), "no model.safetensors");
}

}  // namespace
}  // namespace cuset
