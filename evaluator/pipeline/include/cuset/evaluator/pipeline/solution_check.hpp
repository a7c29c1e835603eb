#pragma once
// `cuset problems check --solutions`: proves every problem solvable (each has a solution that is judged
// `correct`) and the harness strict (each known-bad `bad_*.cu` gets the verdict it records).
//
// A bad solution records its expectation in a line comment of its own:
//   // @expect: wrong_answer
//   // @expect-reason: out of bounds        (optional: a substring the verdict's reason must contain)
// Any other .cu file of solutions/ is expected to be `correct`.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/results/eval_result.hpp"
#include "cuset/evaluator/results/verdict.hpp"

namespace cuset {

struct SolutionExpectation {
  Verdict verdict = Verdict::correct;
  std::string reasonContains;  // empty: any reason
  // `// @expect-sim: <verdict>` (+ `// @expect-sim-reason:`): what the simulator sees where it sees
  // more than a GPU run would (an over-read a GPU lets pass as garbage, the simulator's fence catches).
  std::optional<Verdict> simVerdict;
  std::string simReasonContains;
};

bool isKnownBadSolution(const std::filesystem::path& file);

// The expectation a solution file records; an error naming the file when a bad_*.cu records none or an
// unknown verdict, or when a good solution records anything but `correct`.
Expected<SolutionExpectation> readSolutionExpectation(const std::filesystem::path& file, std::string_view source);

struct SolutionCheckRow {
  std::string problem;   // "level1/relu"
  std::string file;      // the solution file, or empty for a problem-level failure
  std::string expected;  // "wrong_answer", "correct", ... ("-" when not checkable on this backend)
  std::string got;       // the verdict the harness gave
  std::string reason;    // the harness's reason for it
  std::string failure;   // empty: as expected
  bool skipped = false;  // the expectation needs a backend that runs kernels
  bool ok() const { return failure.empty(); }
};

// Matches the results of evaluating the suite's solution folders against their expectations; also
// fails problems without any good solution.
std::vector<SolutionCheckRow> compareSolutionVerdicts(const ProblemSuite& suite, const std::vector<EvalResult>& results, BackendKind backend);

std::string formatSolutionCheck(const std::vector<SolutionCheckRow>& rows);

}  // namespace cuset
