#pragma once
// `cuset data verify`: instruction/response pairs from anywhere (a model's samples, a published
// dataset of KernelBench solutions) admitted to a training set only when the evaluator judges the
// response correct for its problem, in either candidate form (docs/cli-data.md).
#include <cstdint>
#include <filesystem>
#include <string>

namespace cuset::synth {

struct VerifyOptions {
  std::filesystem::path pairs;     // JSONL: {"problem", "instruction", "response"} or {"problem", "messages": [...]}
  std::filesystem::path problems;  // the suite the problem ids name
  std::filesystem::path out;       // the accepted pairs, as they were given
  std::uint64_t seed = 1;          // inputs of the verification trials
  int trials = 3;
  std::size_t jobs = 0;
  std::filesystem::path cacheDir;
  bool showProgress = true;
};

struct VerifySummary {
  std::size_t pairs = 0;
  std::size_t accepted = 0;
  std::size_t rejected = 0;
  std::filesystem::path report;  // OUT.verify.json: every rejected pair with its verdict and reason
  std::filesystem::path run;     // the evaluation run (results.jsonl, report.html)
  double seconds = 0.0;
};

// Throws cuset::Error naming the file and line for a pair without a problem or a response; a response
// that is wrong in any way is a rejected pair, never an exception.
VerifySummary runVerifyPairs(const VerifyOptions& options);

}  // namespace cuset::synth
