#pragma once
// A judge elsewhere: `cuset eval --server URL` (docs/serve.md "cuset eval --server") sends each
// candidate to a running `cuset serve` and records the verdict it gives, in a run folder of this
// machine written as a local run writes it (results.jsonl, run.json, resume, reports).
#include <string>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

class RemoteJudge {
 public:
  virtual ~RemoteJudge() = default;
  virtual std::string describe() const = 0;  // for run.json and messages: the server and how it judges
  // The candidate's result; `shell` holds its identity (problem, sample, model, origin, source). Never
  // throws for what the server says of the candidate; throws cuset::Error when the server cannot judge
  // at all (unreachable past its patience, a token it refuses), which stops the run as a harness failure.
  virtual EvalResult judge(const Candidate& candidate, const Problem& problem, EvalResult shell) const = 0;
};

}  // namespace cuset
