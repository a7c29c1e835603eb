#pragma once
// Terminal renderings of the problem suite for `cuset problems` (list, show, check); the CLI only
// parses options, calls one function and prints its result.
#include <string>
#include <vector>

#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/suite/problem_check.hpp"

namespace cuset {

std::string formatProblemList(const ProblemSuite& suite);
std::string formatProblemDetails(const Problem& problem);
std::string formatProblemCheck(const std::vector<ProblemCheckResult>& results, const std::vector<std::string>& loadErrors);

}  // namespace cuset
