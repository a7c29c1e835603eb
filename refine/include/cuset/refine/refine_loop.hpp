#pragma once
// `cuset refine`: the Feature Search and Reinforcement loop of CUDA-LLM (DESIGN §8). Per problem,
// rounds of N candidates judged by the evaluator; while none is correct, the next round's prompt
// carries the dialogue so far and the evaluator's feedback on the best failures; once one is correct
// (on a GPU), performance rounds carry the fastest correct kernel and its measured times and ask for a
// faster one that stays correct. Stops at depth D, after P rounds without improvement, or at the
// request/token budget. Every round is a candidate file plus a `cuset eval` run folder, so a killed
// run resumes without repeating a finished request or judgement.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/cuda/cuda_backend.hpp"
#include "cuset/models/endpoint_generation.hpp"
#include "cuset/refine/refine_feedback.hpp"
#include "cuset/trainer/generation.hpp"

namespace cuset {

struct RefineOptions {
  // The model: an endpoint (endpoint.baseUrl set) or a checkpoint folder (checkpoint.modelDir set).
  // Their sampling settings are used; their problem and output fields are not.
  EndpointGenerateOptions endpoint;
  GenerateOptions checkpoint;
  PromptStyle prompt = PromptStyle::kernelbench;
  PromptContext promptContext;  // kernelbench-native: the KernelBench checkout
  std::filesystem::path problemsDir;
  std::filesystem::path outDir;
  std::vector<std::string> only;  // problem ids; empty: the whole suite
  std::string backend = "sim";    // sim or cuda
  int candidatesPerRound = 4;     // N
  int rounds = 4;                 // D
  int patience = 2;               // P: rounds without improvement before a problem stops
  FeedbackDetail feedback = FeedbackDetail::full;
  int feedbackCandidates = 2;  // failures shown per round
  int history = 3;             // rounds of dialogue carried (older turns are dropped)
  bool resume = false;
  std::size_t maxRequests = 0;  // 0: no budget
  std::int64_t maxTokens = 0;
  // Evaluation
  int trials = 3;
  std::string sizes;
  std::optional<std::uint64_t> seed;  // inputs; random (and recorded) when absent
  CudaOptions cuda;
  std::size_t jobs = 0;
  bool showProgress = true;
  bool usesEndpoint() const { return !endpoint.endpoint.baseUrl.empty(); }
};

struct RefineSummary {
  std::size_t problems = 0;
  std::size_t solved = 0;
  int roundsRun = 0;
  std::size_t requests = 0;
  std::int64_t tokens = 0;
  bool budgetSpent = false;
  std::filesystem::path report;  // refine.html
  std::string table;             // the Markdown summary, for the terminal
};

RefineSummary runRefine(const RefineOptions& options);

}  // namespace cuset
