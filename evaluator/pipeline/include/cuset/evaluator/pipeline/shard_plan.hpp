#pragma once
// `cuset eval --shard I/N`: which candidates shard I of N judges. All samples of a problem go to one
// shard (pass@k is computed per problem, so it stays exact), and problems are spread over shards by an
// estimate of their cost, largest first onto the least-loaded shard (LPT), with ties broken by
// problem id, so every shard computes the same partition from the same candidates and suite.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace cuset {

struct Shard {
  std::size_t index = 1;  // 1-based, as Slurm array task ids 1..N
  std::size_t count = 1;
  friend bool operator==(const Shard&, const Shard&) = default;
};

// "2/3" -> {2, 3}; nullopt unless 1 <= I <= N <= 10000.
std::optional<Shard> parseShard(std::string_view text);

// The estimated cost of judging a problem's candidates: candidates x (1 + log2(1 + MB of work at
// `sizeSet`)), work being the problem's declared FLOPs + bytes (0 when it declares none). Sublinear
// in the work because per-candidate costs that do not grow with it (compile, worker start, timing
// caps) dominate at the sizes problems run at.
double estimatedProblemCost(const Problem& problem, std::size_t candidates, const std::string& sizeSet);

// The problem ids shard `shard` judges, over the problems the candidates name (ids the suite does
// not know cost as one unit of work per candidate).
std::set<std::string> shardProblems(const std::vector<Candidate>& candidates, const ProblemSuite& suite, const std::string& sizeSet, Shard shard);

// A fingerprint of a whole candidate set (every key with its source hash, or read error), recorded by
// every shard so `cuset merge` can tell that shards came from the same candidates.
std::string candidateSetFingerprint(const std::vector<Candidate>& candidates);

}  // namespace cuset
