#pragma once
// What the next round of `cuset refine` tells the model about a judged kernel. Only what the
// evaluator reported goes in (its verdict, reason, compiler errors, mismatch statistics, measured
// times); the surrounding sentences are fixed instructions, so the feedback is never invented.
#include <string>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

enum class FeedbackDetail {
  brief,  // verdict and reason
  full,   // + the first compiler errors with their lines, every failing output's statistics
};

// How far a failing kernel got, higher is closer to correct: ran with wrong values > crashed or hung
// > did not compile > not a valid submission. For choosing which failures to show the model.
int failureProgress(const EvalResult& result);

// "Your kernel was judged wrong_answer: ..." with the evaluator's details.
std::string failureFeedback(const EvalResult& result, FeedbackDetail detail);

// For a correct kernel timed on a GPU: its median time and spread, the reference's, the speedup and
// the speed-of-light fraction, and the request for a faster kernel that stays correct.
std::string performanceFeedback(const EvalResult& best);

}  // namespace cuset
