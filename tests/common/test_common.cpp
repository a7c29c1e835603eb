#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/common/text_table.hpp"
#include "cuset/common/thread_pool.hpp"
#include "cuset/common/yaml_util.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

TEST(Error, RethrowWithContextPrependsContext) {
  try {
    try {
      throw std::runtime_error("inner problem");
    } catch (...) {
      rethrowWithContext("loading foo.yaml");
    }
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "loading foo.yaml: inner problem");
  }
}

TEST(Log, ParsesLevelsAndRejectsUnknown) {
  EXPECT_EQ(log::parseLevel("debug"), log::Level::debug);
  EXPECT_EQ(log::parseLevel("off"), log::Level::off);
  CUSET_EXPECT_THROW_WITH(log::parseLevel("verbose"), "verbose", "debug, info");
}

TEST(Hash, IsDeterministicAndContentSensitive) {
  EXPECT_EQ(hashString("kernel"), hashString("kernel"));
  EXPECT_NE(hashString("kernel"), hashString("kernel "));
  EXPECT_EQ(hashString("x").hex().size(), 32u);
}

TEST(Hash, PiecesAreLengthPrefixed) {
  ContentHasher a, b;
  a.add("ab").add("c");
  b.add("a").add("bc");
  EXPECT_NE(a.digest(), b.digest());
}

TEST(ThreadPool, RunsEveryTaskAndPropagatesExceptions) {
  ThreadPool pool(3);
  std::atomic<int> sum{0};
  std::vector<std::future<int>> results;
  for (int i = 1; i <= 100; ++i) results.push_back(pool.submit([i, &sum] { sum += i; return i * 2; }));
  int total = 0;
  for (auto& f : results) total += f.get();
  EXPECT_EQ(sum.load(), 5050);
  EXPECT_EQ(total, 10100);
  auto failing = pool.submit([]() -> int { throw Error("boom"); });
  EXPECT_THROW(failing.get(), Error);
}

TEST(Progress, FormatsRateAndEta) {
  EXPECT_EQ(ProgressBar::formatStatus(10, 40, 5.0, "cand"), "10/40 2.0 cand/s ETA 15s");
  EXPECT_EQ(ProgressBar::formatStatus(40, 40, 5.0, "cand"), "40/40 8.0 cand/s ETA 0s");
  EXPECT_EQ(ProgressBar::formatStatus(0, 40, 0.0, "cand"), "0/40 0.0 cand/s ETA ?");
  EXPECT_EQ(ProgressBar::formatDuration(3725), "1h02m");
  EXPECT_EQ(ProgressBar::formatDuration(75), "1m15s");
}

TEST(TextTable, PadsColumnsAndEllipsizes) {
  TextTable t({"a", "long header"});
  t.addRow({"wide cell", "x"});
  EXPECT_EQ(t.render(), "a          long header\n---------  -----------\nwide cell  x\n");
  EXPECT_EQ(ellipsize("abcdef\nghij", 8), "abcde...");
  EXPECT_EQ(ellipsize("short", 8), "short");
}

TEST(FileUtil, AtomicWriteReplacesAndMissingFileIsNamed) {
  test::TempDir dir;
  writeFileAtomic(dir / "a/b.txt", "one");
  writeFileAtomic(dir / "a/b.txt", "two");
  EXPECT_EQ(readFile(dir / "a/b.txt"), "two");
  // No temporary files are left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "a"), std::filesystem::directory_iterator()), 1);
  CUSET_EXPECT_THROW_WITH(readFile(dir / "nope.txt"), "nope.txt", "not found");
}

TEST(Json, ParseErrorNamesSource) {
  CUSET_EXPECT_THROW_WITH(parseJson("{\"a\": ", "config.json"), "config.json", "invalid JSON");
  EXPECT_EQ(parseJson("{\"a\": 1}", "x")["a"], 1);
}

TEST(Yaml, SyntaxErrorNamesSourceAndLine) {
  YamlReader reader("problem.yaml");
  CUSET_EXPECT_THROW_WITH(reader.parse("a: 1\nb: [1, 2\nc: 3\n"), "problem.yaml:", "invalid YAML");
}

TEST(Yaml, FieldErrorsNameFieldAndLineWithOffset) {
  YamlReader reader("manifest", 10);
  const YAML::Node root = reader.parse("x: 1\ny: abc\n");
  CUSET_EXPECT_THROW_WITH(reader.asInt64(root["y"], "y"), "manifest:12:", "field 'y'", "expected an integer, got 'abc'");
  CUSET_EXPECT_THROW_WITH(reader.require(root, "z", "top"), "field 'top.z'", "required but missing");
}

TEST(Yaml, OnlyKeysRejectsTypos) {
  YamlReader reader("p.yaml");
  const YAML::Node root = reader.parse("name: x\ntolerence: 1\n");
  CUSET_EXPECT_THROW_WITH(reader.onlyKeys(root, "", {"name", "tolerance"}), "tolerence", "unknown key", "tolerance");
}

TEST(Yaml, ExpressionItemsRejoinCommaSplitCalls) {
  YamlReader reader("m");
  const YAML::Node root = reader.parse("g: [ceil_div(N, 16), min(M, max(N, 2)), K]\n");
  const auto items = reader.expressionItems(root["g"], "g");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].text, "ceil_div(N, 16)");
  EXPECT_EQ(items[1].text, "min(M, max(N, 2))");
  EXPECT_EQ(items[2].text, "K");
  EXPECT_EQ(items[2].path, "g[2]");
  CUSET_EXPECT_THROW_WITH(reader.expressionItems(reader.parse("g: [min(N, 2]")["g"], "g"), "unbalanced '('");
}

}  // namespace
}  // namespace cuset
