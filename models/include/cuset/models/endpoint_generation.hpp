#pragma once
// `cuset generate --endpoint URL --model NAME`: k samples per problem from an OpenAI-compatible chat
// endpoint, written as the candidate JSONL `cuset eval` reads. Requests run `concurrency` at a time,
// failures are retried with backoff, and every finished sample is appended at once, keyed by its
// request, so a resumed run (or a rerun of `cuset leaderboard`) never pays for a sample twice and
// never reuses one whose prompt or parameters changed.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/models/chat_completions.hpp"
#include "cuset/trainer/problem_prompt.hpp"

namespace cuset {

struct EndpointConfig {
  std::string baseUrl;             // the API base, e.g. http://host:8000/v1; requests go to {baseUrl}/chat/completions
  std::string apiKeyEnv;           // the environment variable holding the key (sent as a bearer token); empty: no key
  std::filesystem::path caBundle;  // extra trusted CAs for HTTPS; empty: the system's
  int concurrency = 8;             // requests in flight at most
  std::chrono::milliseconds requestTimeout{600'000};
  RetryPolicy retry;
};

struct EndpointGenerateOptions {
  EndpointConfig endpoint;
  ChatParameters parameters;  // parameters.model: the served model's name
  std::filesystem::path problemsDir;
  std::filesystem::path outFile;  // candidate JSONL, appended sample by sample
  std::string modelLabel;         // the candidates' "model" field; default: parameters.model
  int samples = 1;                // k per problem
  PromptStyle prompt = PromptStyle::kernelbench;
  PromptContext promptContext;  // kernelbench-native: the KernelBench checkout
  bool useN = true;             // ask for all of a problem's samples in one request (`n`)
  bool resume = false;          // keep the finished samples of `outFile`
  bool showProgress = true;
  // Budgets (0: none): no request is sent past them; the samples not asked for stay missing.
  std::size_t maxRequests = 0;  // HTTP requests, retries included
  std::int64_t maxTokens = 0;   // prompt + completion tokens reported by the server
};

struct EndpointGenerateSummary {
  std::size_t problems = 0;
  std::size_t samples = 0;   // in the output file now
  std::size_t reused = 0;    // finished before this run (--resume)
  std::size_t replaced = 0;  // records of other requests moved aside (a changed prompt or parameter)
  std::size_t requests = 0;  // HTTP requests sent, retries included
  std::size_t retries = 0;
  std::size_t failed = 0;        // samples recorded with an error (malformed answer, refused request)
  std::size_t usageMissing = 0;  // samples whose answer reported no token counts
  std::int64_t promptTokens = 0;
  std::int64_t completionTokens = 0;
  bool nIgnored = false;     // the server answered `n` > 1 with fewer choices (or refused it)
  bool budgetSpent = false;  // maxRequests or maxTokens stopped the run early
  double seconds = 0.0;
};

EndpointGenerateSummary runEndpointGeneration(const EndpointGenerateOptions& options);

// The engine under runEndpointGeneration, for callers that make their own prompts; the options'
// problemsDir, samples and prompt are not used.
EndpointGenerateSummary runEndpointJobs(const EndpointGenerateOptions& options, const std::vector<ChatJob>& jobs);

// The key recorded with a sample: a hash of the served model's name, the messages, every sampling
// parameter and the sample's index. Equal keys mean the same request; anything else is a new one.
std::string sampleRequestKey(const std::vector<ChatMessage>& messages, const ChatParameters& parameters, std::int64_t sample);

// The models an endpoint serves (GET {baseUrl}/models), for error messages; empty when it does not say.
std::vector<std::string> listServedModels(const EndpointConfig& endpoint);

}  // namespace cuset
