#pragma once
// Terminal renderings of evaluator objects, shared by the CLI subcommands (which only parse options,
// call one function and print its result).
#include <string>
#include <vector>

#include "cuset/evaluator/eval_pipeline.hpp"
#include "cuset/evaluator/problem_check.hpp"
#include "cuset/evaluator/problem_suite.hpp"

namespace cuset {

std::string formatProblemList(const ProblemSuite& suite);
std::string formatProblemDetails(const Problem& problem);
std::string formatProblemCheck(const std::vector<ProblemCheckResult>& results, const std::vector<std::string>& loadErrors);
// One row per candidate when there are at most `maxRows`, then the verdict counts.
std::string formatEvalSummary(const EvalRunSummary& summary, std::size_t maxRows);

}  // namespace cuset
