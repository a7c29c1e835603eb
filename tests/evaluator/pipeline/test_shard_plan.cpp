// `cuset eval --shard I/N`'s partition: every problem in exactly one shard, all its samples together,
// the same answer on every machine, and balanced by estimated cost.
#include <gtest/gtest.h>

#include <map>

#include "cuset/evaluator/pipeline/shard_plan.hpp"

namespace cuset {
namespace {

std::vector<Candidate> candidatesFor(const ProblemSuite& suite, int samples) {
  std::vector<Candidate> out;
  for (const auto& p : suite.problems()) {
    for (int s = 0; s < samples; ++s) {
      Candidate c;
      c.problemId = p.id;
      c.sample = s;
      c.model = "m";
      c.source = "// " + p.id;
      out.push_back(c);
    }
  }
  return out;
}

TEST(ShardPlan, ParsesIOverN) {
  EXPECT_EQ(parseShard("2/3"), (Shard{2, 3}));
  EXPECT_EQ(parseShard("1/1"), (Shard{1, 1}));
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/3x", "1/20000"}) EXPECT_FALSE(parseShard(bad)) << bad;
}

TEST(ShardPlan, EveryProblemIsInExactlyOneShardAndTheLoadIsBalanced) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const auto candidates = candidatesFor(suite, 4);
  for (std::size_t n : {1u, 2u, 3u, 7u}) {
    std::map<std::string, std::size_t> owner;
    std::vector<double> load(n, 0.0);
    double largest = 0;
    for (std::size_t i = 1; i <= n; ++i) {
      const auto mine = shardProblems(candidates, suite, "small", Shard{i, n});
      EXPECT_EQ(mine, shardProblems(candidates, suite, "small", Shard{i, n})) << "deterministic";
      for (const auto& id : mine) {
        EXPECT_TRUE(owner.emplace(id, i).second) << id << " in two shards";
        const double cost = estimatedProblemCost(*suite.find(id), 4, "small");
        load[i - 1] += cost;
        largest = std::max(largest, cost);
      }
    }
    EXPECT_EQ(owner.size(), suite.problems().size()) << n;
    // Greedy largest-first: no shard exceeds another by more than the largest single problem.
    EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()), largest + 1e-9) << n;
  }
}

TEST(ShardPlan, CostGrowsWithCandidatesAndWork) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  const Problem& small = *suite.find("level1/relu");
  const Problem& big = *suite.find("level1/matmul_square");
  EXPECT_GT(estimatedProblemCost(small, 8, "small"), estimatedProblemCost(small, 4, "small"));
  EXPECT_GT(estimatedProblemCost(big, 4, "small"), estimatedProblemCost(small, 4, "small"));
}

TEST(ShardPlan, TheCandidateSetFingerprintSeesEverySource) {
  const ProblemSuite suite = ProblemSuite::load(CUSET_PROBLEMS_DIR);
  auto candidates = candidatesFor(suite, 2);
  const std::string before = candidateSetFingerprint(candidates);
  std::reverse(candidates.begin(), candidates.end());
  EXPECT_EQ(candidateSetFingerprint(candidates), before) << "order does not matter";
  candidates[3].source += " ";
  EXPECT_NE(candidateSetFingerprint(candidates), before);
}

}  // namespace
}  // namespace cuset
