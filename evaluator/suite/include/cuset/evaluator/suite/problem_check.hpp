#pragma once
// `cuset problems check`: proves each problem is well-formed and meaningful before any kernel is judged
// against it: the reference compiles and runs on `small` inputs (or the problem's cheapest set), its
// outputs match the declared names, shapes and dtypes, and no trivial kernel (a constant, or one
// ignoring the inputs) could pass. A problem that says it is defective (`defect:`) keeps its defects as
// notes instead of failures.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace cuset {

struct ProblemCheckResult {
  std::string id;
  std::vector<std::string> failures;  // the reference is broken: it does not run, or returns NaN
  std::vector<std::string> defects;   // it runs but a trivial kernel would pass (degenerate, ignores inputs)
  bool defectFlagged = false;         // the problem says so itself (`defect:`): its defects are expected
  double referenceMs = 0.0;           // reference forward on the check set, trial 0
  bool ok() const { return failures.empty() && (defects.empty() || defectFlagged); }
  // Failures, then unflagged defects: what makes ok() false, worst first.
  std::vector<std::string> problems() const;
};

// `seed` draws the inputs of the run that must not fail (NaN, an exception). Degeneracy is judged on
// kDegeneracyDraws fixed draws (kDegeneracySeed), the same for every caller and every --seed.
inline constexpr std::uint64_t kDegeneracySeed = 0x43555345544445ull;  // "CUSETDE"
inline constexpr std::uint64_t kDegeneracyDraws = 4;
ProblemCheckResult checkProblem(const Problem& problem, std::uint64_t seed);

// Why `reference` lets a trivial kernel pass, or nullopt. A constant output c (0, the mean, the median)
// that meets the tolerance everywhere is degenerate.
std::optional<std::string> degenerateOutputReason(const HostTensor& reference, const Tolerance& tolerance);

}  // namespace cuset
