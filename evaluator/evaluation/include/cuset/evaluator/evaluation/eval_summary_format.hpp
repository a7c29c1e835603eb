#pragma once
// The terminal summary `cuset eval` prints at the end of a run.
#include <cstddef>
#include <string>

#include "cuset/evaluator/evaluation/evaluation.hpp"

namespace cuset {

// One row per candidate when there are at most `maxRows`, then the verdict counts.
std::string formatEvalSummary(const EvalRunSummary& summary, std::size_t maxRows);

}  // namespace cuset
