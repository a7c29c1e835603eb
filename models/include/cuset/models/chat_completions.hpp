#pragma once
// The OpenAI chat-completions protocol as vLLM, SGLang, llama.cpp's server, TGI and hosted APIs speak
// it: the request body, the parsing of an answer, and what each failure means for the caller (retry
// later, a failed sample, or stop the run). Pure functions: no network here.
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/models/http_client.hpp"
#include "cuset/trainer/chat_data.hpp"

namespace cuset {

// What is sent, apart from `n` (how many samples one request asks for) and the seed offset.
struct ChatParameters {
  std::string model;  // the served model's name
  double temperature = 0.8;
  double topP = 0.95;
  int maxTokens = 4096;
  std::optional<std::uint64_t> seed;  // sample i is asked with seed + i; absent: no seed is sent
  std::vector<std::string> stop;
};

std::string chatRequestBody(const std::vector<ChatMessage>& messages, const ChatParameters& parameters, int n, std::optional<std::uint64_t> seed);

struct ChatChoice {
  std::string content;
  std::string finishReason;  // "stop", "length", ...; empty when the server gave none
};

struct ChatUsage {
  std::int64_t promptTokens = 0;
  std::int64_t completionTokens = 0;
};

struct ChatAnswer {
  std::vector<ChatChoice> choices;  // in the server's `index` order
  std::optional<ChatUsage> usage;   // absent when the server reports none
};

// A 200 answer's body; the error says what is wrong with it (not JSON, no choices, ...).
Expected<ChatAnswer> parseChatAnswer(const std::string& body);

// The server's own message from an error body ({"error": {"message": ...}} or {"message": ...} or
// {"detail": ...}), else the body's start; for one-line error messages.
std::string serverErrorMessage(const std::string& body);

enum class ExchangeOutcome {
  answer,   // 200 with a body: parse it
  retry,    // connection error, timeout, 429, 5xx (408 and 409 too): try again after a delay
  refused,  // 400, 413, 422...: this request cannot succeed (e.g. a prompt over the context): a failed sample
  fatal,    // 401, 403, 404: wrong key, URL or model name; every request would fail the same way
  cut,      // the body ended early: a failed sample (its text is not a response)
};
ExchangeOutcome classifyExchange(const HttpResponse& response);

// Exponential backoff with full jitter (the delay is uniform in [0, min(cap, base * 2^attempt)]), or
// the server's Retry-After when it gives one (capped at `cap` as well).
struct RetryPolicy {
  int maxRetries = 8;
  std::chrono::duration<double> base{1.0};
  std::chrono::duration<double> cap{60.0};
  std::chrono::duration<double> delay(int attempt, std::optional<double> retryAfterSeconds, std::mt19937_64& rng) const;
};

}  // namespace cuset
