// The simulator's `large` size set of a KernelBench problem (issue #61): KernelBench's own sizes with the
// batch halved until the problem fits the budget.
#include <gtest/gtest.h>

#include "cuset/evaluator/problem/large_sizes.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

// qwencoder level 1 problem 48 as imported: a mean over dim 1 of a (128, 4096, 4095) tensor.
constexpr const char* kMeanOverDim = R"(name: kb48_mean
level: 1
sizes:
  small: {batch_size: 8, dim1: 256, dim2: 255}
  full: {batch_size: 128, dim1: 4096, dim2: 4095}
inputs:
  x: {dtype: float32, shape: [batch_size, dim1, dim2]}
outputs:
  out: {dtype: float32, shape: [batch_size, dim2]}
reference_archive:
  archives: {small: reference.pt, full: reference.pt}
cost:
  small: {flops: 2040, bytes: 2097120}
  full: {flops: 524160, bytes: 8589934080}
origin:
  suite: kernelbench
  size_overrides:
    small: {batch_size: 8, dim1: 256, dim2: 255}
)";

// Parsed in a folder holding the archives it names (parsing checks they exist).
Problem parse(const std::string& text) {
  static const test::TempDir dir;
  for (const char* archive : {"reference.pt", "small.pt", "full.pt"}) test::writeText(dir.path() / archive, "");
  return parseProblem(text, (dir.path() / "problem.yaml").string(), dir.path());
}

TEST(LargeSizes, KeepKernelBenchsSizesButTheBatch) {
  Problem p = parse(kMeanOverDim);
  ASSERT_TRUE(addLargeSizeSet(p, {}));
  const SizeBindings& large = p.sizes("large");
  EXPECT_EQ(large.at("dim1"), 4096);
  EXPECT_EQ(large.at("dim2"), 4095);
  EXPECT_EQ(large.at("batch_size"), 4);  // 268,435,456 bytes at most: 4 x 4096 x 4095 floats and the output are 268,435,440
  EXPECT_EQ(p.origin->sizeOverrides.at("large"), (std::map<std::string, std::int64_t>{{"batch_size", 4}}));
  EXPECT_EQ(p.referenceArchive->archives.at("large"), p.referenceArchive->archives.at("full"));
  EXPECT_EQ(*p.flopsAt("large"), 524160 / 32);
  EXPECT_FALSE(addLargeSizeSet(p, {})) << "a second one";
  Problem roomier = parse(kMeanOverDim);
  ASSERT_TRUE(addLargeSizeSet(roomier, {.maxBytes = std::int64_t{1} << 30}));
  EXPECT_EQ(roomier.sizes("large").at("batch_size"), 16);
}

std::string replaced(std::string text, std::string_view from, std::string_view to) { return text.replace(text.find(from), from.size(), to); }

TEST(LargeSizes, OnlyWhereTheirValuesAreKnown) {
  const std::string traced = replaced(kMeanOverDim, "{small: reference.pt, full: reference.pt}", "{small: small.pt, full: full.pt}");
  EXPECT_FALSE(largeSizeSet(parse(traced), {})) << "a trace per size set: none for `large`";
  // dim2 changed though no constant of that name was scaled: its value at `large` is unknown.
  const std::string derived = replaced(kMeanOverDim, "    small: {batch_size: 8, dim1: 256, dim2: 255}", "    small: {batch_size: 8, dim1: 256}");
  EXPECT_FALSE(largeSizeSet(parse(derived), {}));
  // `small` is `full` but the batch: nothing new at `large`.
  const std::string batchOnly =
      replaced(kMeanOverDim, "  small: {batch_size: 8, dim1: 256, dim2: 255}", "  small: {batch_size: 8, dim1: 4096, dim2: 4095}");
  EXPECT_FALSE(largeSizeSet(parse(batchOnly), {}));
  EXPECT_FALSE(largeSizeSet(parse(replaced(kMeanOverDim, "suite: kernelbench", "suite: cuset")), {})) << "not KernelBench's";
  EXPECT_FALSE(largeSizeSet(parse(kMeanOverDim), {.maxBytes = 1 << 20})) << "even one sample is over 1 MiB";
  // A group count the import cut (suites imported before #61): the one archive holds the cut count.
  const std::string cutCount =
      replaced(kMeanOverDim, "    small: {batch_size: 8, dim1: 256, dim2: 255}", "    small: {batch_size: 8, dim1: 256, dim2: 255, num_groups: 4}");
  EXPECT_FALSE(largeSizeSet(parse(cutCount), {}));
  EXPECT_TRUE(largeSizeSet(parse(kMeanOverDim), {}));
}

}  // namespace
}  // namespace cuset
