#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <stdexcept>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/common/text_excerpt.hpp"
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
  for (int i = 1; i <= 100; ++i)
    results.push_back(pool.submit([i, &sum] {
      sum += i;
      return i * 2;
    }));
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

// Off a terminal (CI, Slurm, nohup), progress is a line per 10% of the work or per 30 s, whichever
// comes first, then the final count.
TEST(Progress, LogsALineEveryTenthOrThirtySecondsOffATerminal) {
  std::vector<std::string> lines;
  auto clock = std::chrono::steady_clock::time_point{};
  {
    ProgressBar bar(
        "eval", 100, "cand",
        ProgressOptions{
            .mode = ProgressMode::lines, .write = [&](std::string_view text) { lines.emplace_back(text); }, .now = [&] { return clock; }});
    for (int i = 0; i < 25; ++i) {  // 25 units in 25 s: lines at 10% and 20%
      clock += std::chrono::seconds(1);
      bar.advance();
    }
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "eval 10/100 1.0 cand/s ETA 1m30s (10%)\n");
    EXPECT_EQ(lines[1], "eval 20/100 1.0 cand/s ETA 1m20s (20%)\n");
    clock += std::chrono::seconds(40);  // slow work: a line after 30 s even within one tenth
    bar.advance();
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[2].rfind("eval 26/100 ", 0), 0u) << lines[2];
  }
  ASSERT_EQ(lines.size(), 3u) << "the last line already showed the final count";
  lines.clear();
  {
    ProgressBar bar(
        "train", 7, "step",
        ProgressOptions{
            .mode = ProgressMode::lines, .write = [&](std::string_view text) { lines.emplace_back(text); }, .now = [&] { return clock; }});
    bar.advance(2);
    bar.setSuffix("loss 2.31");
    bar.advance();
  }
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("3/7"), std::string::npos) << lines.back();
  EXPECT_NE(lines.back().find("loss 2.31"), std::string::npos) << lines.back();
  lines.clear();
  {
    ProgressBar bar(
        "gen", 100, "sample",
        ProgressOptions{
            .mode = ProgressMode::lines, .write = [&](std::string_view text) { lines.emplace_back(text); }, .now = [&] { return clock; }});
    for (int i = 0; i < 12; ++i) bar.advance();
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].rfind("gen 12/100 ", 0), 0u) << "the final count when no line showed it: " << lines[1];
  lines.clear();
  {
    ProgressBar quiet("eval", 10, "cand",
                      ProgressOptions{.mode = ProgressMode::off, .write = [&](std::string_view text) { lines.emplace_back(text); }});
    quiet.advance(10);
  }
  EXPECT_TRUE(lines.empty());
}

TEST(TextTable, PadsColumnsAndEllipsizes) {
  TextTable t({"a", "long header"});
  t.addRow({"wide cell", "x"});
  EXPECT_EQ(t.render(), "a          long header\n---------  -----------\nwide cell  x\n");
  EXPECT_EQ(ellipsize("abcdef\nghij", 8), "abcde...");
  EXPECT_EQ(ellipsize("short", 8), "short");
  // Never through a UTF-8 sequence: "‘" is three bytes, and a cut inside it is not text.
  EXPECT_EQ(ellipsize("error: \u2018name\u2019", 11), "error: ...");
  EXPECT_EQ(shortened("ab\u2018cd", 6), "ab...");
  EXPECT_EQ(shortened("abc", 3), "abc");
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

// A cache entry, once published, keeps its inode: a sandboxed worker may hold a Landlock rule for it,
// and a second build of the same source replacing it made that worker's load fail ("Permission
// denied": a correct kernel judged runtime_error when two jobs built it at once).
TEST(FileUtil, APublishedCacheEntryIsNeverReplaced) {
  test::TempDir dir;
  writeFileAtomic(dir / "first.tmp", "first build");
  EXPECT_TRUE(publishFileOnce(dir / "first.tmp", dir / "key.so"));
  const auto inode = [&] {
    struct stat st {};
    EXPECT_EQ(::stat((dir / "key.so").c_str(), &st), 0);
    return st.st_ino;
  };
  const auto published = inode();
  writeFileAtomic(dir / "second.tmp", "second build");
  EXPECT_FALSE(publishFileOnce(dir / "second.tmp", dir / "key.so"));
  EXPECT_EQ(inode(), published);
  EXPECT_EQ(readFile(dir / "key.so"), "first build");
  EXPECT_FALSE(std::filesystem::exists(dir / "first.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir / "second.tmp"));
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

TEST(TextExcerpt, ShortTextIsKeptWholeLongTextIsBoundedWithHeadAndTail) {
  EXPECT_EQ(excerpt("abc", 10), "abc");
  const std::string longText = "BEGIN" + std::string(100000, 'x') + "END";
  const std::string cut = excerpt(longText, 200);
  EXPECT_LE(cut.size(), 200u);
  EXPECT_EQ(cut.substr(0, 5), "BEGIN");
  EXPECT_EQ(cut.substr(cut.size() - 3), "END");
  EXPECT_NE(cut.find("bytes left out"), std::string::npos);
}

TEST(TextExcerpt, CutsBetweenUtf8Characters) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xC3\xA9";  // é, two bytes each
  for (std::size_t limit = 60; limit < 70; ++limit) {
    const std::string cut = excerpt(text, limit);
    ASSERT_LE(cut.size(), limit);
    // Every multi-byte sequence is whole: each lead byte 0xC3 is followed by its continuation 0xA9.
    for (std::size_t i = 0; i < cut.size(); ++i) {
      if (static_cast<unsigned char>(cut[i]) == 0xC3) {
        ASSERT_LT(i + 1, cut.size());
        EXPECT_EQ(static_cast<unsigned char>(cut[i + 1]), 0xA9);
      } else if (static_cast<unsigned char>(cut[i]) == 0xA9) {
        ASSERT_GT(i, 0u);
        EXPECT_EQ(static_cast<unsigned char>(cut[i - 1]), 0xC3);
      }
    }
  }
}

TEST(TextExcerpt, LinesAreBoundedOneByOneThenAsAWhole) {
  const std::string log = "error: line one\n" + std::string(5000, '(') + "\nnote: last line\n";
  const std::string cut = excerptLines(log, 100, 10000);
  EXPECT_LT(cut.size(), 300u);
  EXPECT_EQ(cut.substr(0, 16), "error: line one\n");
  EXPECT_NE(cut.find("note: last line\n"), std::string::npos);
  EXPECT_LE(excerptLines(log, 100000, 500).size(), 500u);
}

}  // namespace
}  // namespace cuset
