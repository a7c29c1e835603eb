#pragma once
// The typed result of evaluating one candidate, and its results.jsonl form.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "cuset/evaluator/verdict.hpp"

namespace cuset {

struct StageTimings {
  double manifestMs = 0.0;  // read, extract and validate the manifest
  double compileMs = 0.0;   // NVRTC (or cache lookup)
  double totalMs = 0.0;     // whole candidate, harness bookkeeping included
};

struct EvalResult {
  std::string problem;
  std::int64_t sample = 0;
  std::string model;
  Verdict verdict = Verdict::invalid_submission;
  std::string reason;      // empty only for successes
  std::string backend;     // "compile-only", "sim", "cuda"
  std::string origin;      // file:line or path the candidate came from
  std::string sourceHash;  // XXH3-128 of the source, hex
  std::string source;
  std::string compileLog;
  bool compileCacheHit = false;
  StageTimings timings;

  std::string key() const;  // candidateKey(model, problem, sample)
};

nlohmann::json toJson(const EvalResult& result);
// Throws cuset::Error when a required field is missing or has the wrong type.
EvalResult evalResultFromJson(const nlohmann::json& json);

}  // namespace cuset
