#pragma once
// The seam between the pipeline and the forms a candidate comes in (DESIGN §3: every form becomes one
// launch plan). A run has a list of frontends; for each candidate the pipeline asks them in turn "is
// this yours?", and the first that says yes makes its launch plans, or stops it with a verdict before
// anything runs. Besides frontends a run may have a second opinion: another judge's conclusion,
// reproduced by the same trials beside CuSeT's (KernelBench's own check), for candidates of any form.
// The pipeline names no frontend; the run's composition (evaluator/evaluation/) lists them.
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/correctness/correctness_trials.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

// A verdict reached before anything runs.
struct EarlyVerdict {
  Verdict verdict;
  std::string reason;
};

// What a frontend makes of one candidate: plans, or a verdict before anything runs.
struct FrontendPlan {
  std::optional<CandidatePlan> plan;
  EarlyVerdict early{Verdict::invalid_submission, ""};  // without a plan
  // With a plan: the verdict it gets whatever its trials show (a library step writes an input); the
  // plan still runs, for the second opinion, which does not look.
  std::optional<EarlyVerdict> standing;
  std::vector<ConstructionDifference> construction;
  bool ok() const { return plan.has_value(); }
};

class CandidateFrontend {
 public:
  virtual ~CandidateFrontend() = default;
  // results.jsonl's `form` for its candidates ("manifest", "kernelbench").
  virtual std::string_view form() const = 0;
  virtual bool recognises(const Candidate& candidate) const = 0;
  // What names the kernels a plan launches, for messages ("manifest names", "the host code launches").
  virtual std::string_view launcher() const = 0;
  // Thread-safe; never throws for a bad candidate (a harness failure, such as no Python, may throw).
  // Records what it learns on the way (translation time and log, findings, flags) in `r`.
  virtual FrontendPlan plan(const Candidate& candidate, const Problem& problem, EvalResult& r) const = 0;
};

// Another judge's conclusion about one candidate, reproduced beside CuSeT's verdict.
class SecondOpinion {
 public:
  virtual ~SecondOpinion() = default;
  // Its own trials, run with CuSeT's.
  virtual void configureTrials(CorrectnessOptions& options) const = 0;
  // A candidate stopped before its trials: the other judge's conclusion from the same stop.
  virtual void withoutTrials(Verdict verdict, const std::string& reason, EvalResult& r) const = 0;
  // The backend is done: where it stopped before the trials reached the other judge's, conclude as
  // withoutTrials does.
  virtual void afterBackend(EvalResult& r) const = 0;
  // After CuSeT's final verdict: what it predicts beyond the trials (from `plan`'s construction), and
  // why the two verdicts differ.
  virtual void conclude(const FrontendPlan& plan, EvalResult& r) const = 0;
};

// Which candidates get a second opinion.
class SecondOpinionSource {
 public:
  virtual ~SecondOpinionSource() = default;
  // Null: none for this candidate. `form`: the frontend's that recognised it.
  virtual std::unique_ptr<SecondOpinion> forCandidate(const Candidate& candidate, const Problem& problem, std::string_view form) const = 0;
};

// The frontend whose candidate this is: the first of `frontends` that recognises it, or null.
const CandidateFrontend* frontendFor(const std::vector<const CandidateFrontend*>& frontends, const Candidate& candidate);

}  // namespace cuset
