#pragma once
// `cuset problems check`: proves each problem is well-formed and meaningful before any kernel is judged
// against it: the reference compiles and runs on `small` inputs, its outputs match the declared names,
// shapes and dtypes, and no trivial kernel (a constant, or one ignoring the inputs) could pass.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace cuset {

struct ProblemCheckResult {
  std::string id;
  std::vector<std::string> failures;  // empty: the problem passed
  double referenceMs = 0.0;           // reference forward on `small`, trial 0
  bool ok() const { return failures.empty(); }
};

ProblemCheckResult checkProblem(const Problem& problem, std::uint64_t seed);

// Why `reference` lets a trivial kernel pass, or nullopt. A constant output c (0, the mean, the median)
// that meets the tolerance everywhere is degenerate.
std::optional<std::string> degenerateOutputReason(const HostTensor& reference, const Tolerance& tolerance);

}  // namespace cuset
