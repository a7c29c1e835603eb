#include "cuset/models/endpoint_generation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <thread>

#include "cuset/common/error.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/progress.hpp"
#include "sample_file.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

using Clock = std::chrono::steady_clock;

std::string trimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// The URL as shown in messages: without user:password@ should a user put credentials there.
std::string displayUrl(const std::string& url) {
  const auto scheme = url.find("://");
  const auto at = url.find('@', scheme == std::string::npos ? 0 : scheme + 3);
  const auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme == std::string::npos || at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  return url.substr(0, scheme + 3) + url.substr(at + 1);
}

std::string apiKey(const EndpointConfig& e) {
  if (e.apiKeyEnv.empty()) return {};
  const char* key = std::getenv(e.apiKeyEnv.c_str());
  if (!key || !*key) throw makeError("--api-key-env {}: the environment variable is not set (or empty)", e.apiKeyEnv);
  return key;
}

std::vector<std::string> requestHeaders(const std::string& key) {
  std::vector<std::string> headers = {"Content-Type: application/json", "Accept: application/json"};
  if (!key.empty()) headers.push_back(fmt::format("Authorization: Bearer {}", key));
  return headers;
}

// Servers quote a refused key back ("Incorrect API key provided: sk-..."): it never reaches a
// message or a file from here.
std::string scrubbed(std::string text, const std::string& key) {
  if (key.size() < 4) return text;
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at)) text.replace(at, key.size(), "<api key>");
  return text;
}

void validate(const EndpointGenerateOptions& o) {
  const std::string& url = o.endpoint.baseUrl;
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    throw makeError("--endpoint {}: expected an http:// or https:// API base such as http://localhost:8000/v1", displayUrl(url));
  }
  if (o.parameters.model.empty()) throw Error("--model: the served model's name is required with --endpoint");
  if (o.samples < 1 || o.samples > 100'000) throw makeError("-k {}: expected 1 to 100000 samples per problem", o.samples);
  if (o.endpoint.concurrency < 1 || o.endpoint.concurrency > 1024) throw makeError("--concurrency {}: expected 1 to 1024", o.endpoint.concurrency);
  if (o.parameters.maxTokens < 1) throw makeError("--max-tokens {}: expected at least 1", o.parameters.maxTokens);
  if (o.parameters.temperature < 0 || o.parameters.topP <= 0 || o.parameters.topP > 1) {
    throw makeError("--temperature {} / --top-p {}: expected temperature >= 0 and 0 < top-p <= 1", o.parameters.temperature, o.parameters.topP);
  }
}

// GET /models' answer: {"data": [{"id": ...}, ...]}.
std::vector<std::string> modelIds(const HttpResponse& r) {
  std::vector<std::string> ids;
  if (r.status != 200) return ids;
  try {
    const json j = json::parse(r.body);
    for (const auto& m : j.at("data")) {
      if (m.is_object() && m.contains("id") && m["id"].is_string()) ids.push_back(m["id"].get<std::string>());
    }
  } catch (const json::exception&) {
  }
  return ids;
}

// A request for some samples of one problem: all of them when the server honours `n`, else one.
struct Unit {
  std::size_t problem = 0;
  std::vector<std::int64_t> samples;
};

struct PlannedProblem {
  std::string id;
  std::vector<ChatMessage> messages;
  std::map<std::int64_t, std::string> keys;  // sample -> its request key
};

class EndpointRun {
 public:
  EndpointRun(const EndpointGenerateOptions& o, std::vector<PlannedProblem> problems, SampleFile& file, std::size_t toRequest)
      : o_(o),
        problems_(std::move(problems)),
        file_(file),
        key_(apiKey(o.endpoint)),
        headers_(requestHeaders(key_)),
        url_(trimSlash(o.endpoint.baseUrl) + "/chat/completions"),
        progress_("generate", toRequest, "sample", o.showProgress) {}

  void run(std::deque<Unit> units) {
    queue_ = std::move(units);
    start_ = Clock::now();
    // As many workers as samples could be in flight: a unit of n samples splits into single ones when
    // the server ignores n.
    std::size_t samples = 0;
    for (const auto& unit : queue_) samples += unit.samples.size();
    const int workers = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(o_.endpoint.concurrency), samples));
    {
      std::vector<std::jthread> threads;
      for (int i = 0; i < workers; ++i) threads.emplace_back([this] { work(); });
    }
    progress_.finish();
    if (!fatal_.empty()) throw Error(fatal_);
  }

  std::size_t recorded() const { return recorded_; }

  EndpointGenerateSummary summary() const {
    EndpointGenerateSummary s;
    s.requests = requests_;
    s.retries = retries_;
    s.failed = failed_;
    s.usageMissing = usageMissing_;
    s.promptTokens = promptTokens_;
    s.completionTokens = completionTokens_;
    s.nIgnored = nIgnored_;
    s.budgetSpent = budgetSpent_;
    return s;
  }

 private:
  void work() {
    HttpClient client(HttpClientOptions{.caBundle = o_.endpoint.caBundle});
    std::mt19937_64 rng(std::random_device{}());
    while (auto unit = next()) {
      try {
        serve(client, rng, std::move(*unit));
      } catch (const std::exception& e) {
        stop(e.what());
      }
      std::unique_lock lock(mutex_);
      --active_;
      wake_.notify_all();
    }
  }

  std::optional<Unit> next() {
    std::unique_lock lock(mutex_);
    // A worker waits while others may still push work back (samples a server left unanswered).
    wake_.wait(lock, [&] { return !fatal_.empty() || budgetSpent_ || !queue_.empty() || active_ == 0; });
    if (!fatal_.empty() || budgetSpent_ || queue_.empty()) return std::nullopt;
    Unit unit = std::move(queue_.front());
    queue_.pop_front();
    if (unit.samples.size() > 1 && nIgnored_) {
      // The server does not honour n: one request per sample from now on.
      for (std::size_t i = unit.samples.size(); i-- > 1;) queue_.push_front(Unit{unit.problem, {unit.samples[i]}});
      unit.samples.resize(1);
      wake_.notify_all();
    }
    ++active_;
    return unit;
  }

  void requeue(std::size_t problem, std::span<const std::int64_t> samples) {
    const std::scoped_lock lock(mutex_);
    for (const auto s : samples) queue_.push_back(Unit{problem, {s}});
    wake_.notify_all();
  }

  void stop(std::string message) {
    const std::scoped_lock lock(mutex_);
    if (fatal_.empty()) fatal_ = std::move(message);
    wake_.notify_all();
  }

  bool stopped() {
    const std::scoped_lock lock(mutex_);
    return !fatal_.empty() || budgetSpent_;
  }

  // Takes one request from the budget; false (and the run winds down) when it is spent.
  bool withinBudget() {
    const bool requestsLeft = o_.maxRequests == 0 || reserved_.fetch_add(1) < o_.maxRequests;
    const bool tokensLeft = o_.maxTokens == 0 || promptTokens_ + completionTokens_ < o_.maxTokens;
    if (requestsLeft && tokensLeft) return true;
    const std::scoped_lock lock(mutex_);
    budgetSpent_ = true;
    wake_.notify_all();
    return false;
  }

  // Sleeps for a retry delay, waking early when the run stops.
  void pause(std::chrono::duration<double> delay) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, delay, [&] { return !fatal_.empty() || budgetSpent_; });
  }

  void serve(HttpClient& client, std::mt19937_64& rng, Unit unit) {
    const PlannedProblem& p = problems_[unit.problem];
    const int n = static_cast<int>(unit.samples.size());
    const std::optional<std::uint64_t> seed =
        o_.parameters.seed ? std::optional(*o_.parameters.seed + static_cast<std::uint64_t>(unit.samples.front())) : std::nullopt;
    const std::string body = chatRequestBody(p.messages, o_.parameters, n, seed);
    const std::string where = fmt::format("endpoint {} ({} sample {})", displayUrl(o_.endpoint.baseUrl), p.id, unit.samples.front());
    for (int attempt = 0;; ++attempt) {
      if (stopped() || !withinBudget()) return;
      ++inFlight_;
      updateProgress();
      const HttpResponse r = client.post(url_, headers_, body, o_.endpoint.requestTimeout);
      --inFlight_;
      ++requests_;
      const ExchangeOutcome outcome = classifyExchange(r);
      const int attempts = attempt + 1;
      if (outcome == ExchangeOutcome::answer) {
        auto answer = parseChatAnswer(r.body);
        if (!answer) {
          for (const auto s : unit.samples) record(p, s, n, seed, ChatChoice{}, std::nullopt, r.seconds, attempts, scrubbed(answer.error(), key_));
          return;
        }
        accept(unit, p, n, seed, std::move(answer).value(), r.seconds, attempts);
        return;
      }
      if (outcome == ExchangeOutcome::cut) {
        const std::string reason = fmt::format("the endpoint's answer was cut off after {} bytes ({})", r.body.size(), r.transportError);
        for (const auto s : unit.samples) record(p, s, n, seed, ChatChoice{}, std::nullopt, r.seconds, attempts, reason);
        return;
      }
      const std::string what = r.status == 0 ? (r.timedOut ? fmt::format("no answer within {} s", o_.endpoint.requestTimeout.count() / 1000.0)
                                                           : fmt::format("connection failed: {}", r.transportError))
                                             : fmt::format("HTTP {}: {}", r.status, scrubbed(serverErrorMessage(r.body), key_));
      if (outcome == ExchangeOutcome::fatal) {
        throw Error(fatalMessage(client, r, what));
      }
      if (outcome == ExchangeOutcome::refused) {
        if (n > 1) {
          // Some servers refuse n > 1 outright: ask one sample at a time.
          if (!nIgnored_.exchange(true)) log::info("{}: {} with n = {}; asking one sample per request from now on", where, what, n);
          requeue(unit.problem, std::span(unit.samples));
          return;
        }
        const std::string reason = fmt::format("the endpoint refused the request: {}", what);
        record(p, unit.samples.front(), n, seed, ChatChoice{}, std::nullopt, r.seconds, attempts, reason);
        return;
      }
      if (attempt >= o_.endpoint.retry.maxRetries) {
        throw makeError("{}: gave up after {} attempt{}; last: {}. Finished samples are kept in {}: rerun with --resume", where, attempts,
                        attempts == 1 ? "" : "s", what, o_.outFile.string());
      }
      ++retries_;
      const auto delay = o_.endpoint.retry.delay(attempt, r.retryAfterSeconds, rng);
      log::debug("{}: {}; retry {} in {:.2f} s", where, what, attempt + 1, delay.count());
      updateProgress();
      pause(delay);
    }
  }

  std::string fatalMessage(HttpClient& client, const HttpResponse& r, const std::string& what) {
    const std::string url = displayUrl(o_.endpoint.baseUrl);
    if (r.status == 401 || r.status == 403) {
      return fmt::format(
          "endpoint {}: {}: the API key was refused{}", url, what,
          o_.endpoint.apiKeyEnv.empty() ? " (none was sent: pass --api-key-env VAR)" : fmt::format(" (from ${})", o_.endpoint.apiKeyEnv));
    }
    std::vector<std::string> served;
    try {
      const HttpResponse m = client.get(trimSlash(o_.endpoint.baseUrl) + "/models", headers_, std::chrono::seconds(10));
      served = modelIds(m);
    } catch (const std::exception&) {
    }
    return fmt::format("endpoint {}: {} (wrong model name or API base?); {}", url, what,
                       served.empty() ? std::string("GET /models lists no models") : fmt::format("the endpoint serves: {}", fmt::join(served, ", ")));
  }

  void accept(const Unit& unit, const PlannedProblem& p, int n, std::optional<std::uint64_t> seed, ChatAnswer answer, double seconds, int attempts) {
    const std::size_t answered = std::min(answer.choices.size(), unit.samples.size());
    if (answered < unit.samples.size()) {
      if (!nIgnored_.exchange(true)) {
        log::info("endpoint {}: asked for {} samples in one request (n), got {}; asking one sample per request from now on",
                  displayUrl(o_.endpoint.baseUrl), unit.samples.size(), answer.choices.size());
      }
      requeue(unit.problem, std::span(unit.samples).subspan(answered));
    }
    // Usage covers the whole request: each sample carries its share (the first one the remainder, so
    // the shares add up to the request's counts) and the number of samples sharing it.
    const auto shareOf = [&](std::size_t i) -> std::optional<std::pair<ChatUsage, std::size_t>> {
      if (!answer.usage) return std::nullopt;
      const auto k = static_cast<std::int64_t>(answered);
      const auto split = [&](std::int64_t total) { return total / k + (i == 0 ? total % k : 0); };
      return std::pair(ChatUsage{split(answer.usage->promptTokens), split(answer.usage->completionTokens)}, answered);
    };
    for (std::size_t i = 0; i < answered; ++i) {
      ChatChoice& choice = answer.choices[i];
      std::string error;
      if (choice.content.find_first_not_of(" \t\r\n") == std::string::npos) {
        error = fmt::format("the endpoint returned an empty message (finish_reason: {})", choice.finishReason.empty() ? "none" : choice.finishReason);
      }
      record(p, unit.samples[i], n, seed, std::move(choice), shareOf(i), seconds, attempts, error);
    }
  }

  void record(const PlannedProblem& p, std::int64_t sample, int n, std::optional<std::uint64_t> seed, ChatChoice choice,
              std::optional<std::pair<ChatUsage, std::size_t>> usage, double seconds, int attempts, const std::string& error) {
    json request = {{"temperature", o_.parameters.temperature}, {"top_p", o_.parameters.topP}, {"max_tokens", o_.parameters.maxTokens}, {"n", n}};
    if (seed) request["seed"] = *seed;
    if (!o_.parameters.stop.empty()) request["stop"] = o_.parameters.stop;
    json j = {{"problem", p.id},
              {"sample", sample},
              {"model", o_.modelLabel.empty() ? o_.parameters.model : o_.modelLabel},
              {"response", std::move(choice.content)},
              {"served_model", o_.parameters.model},
              {"prompt_style", promptStyleName(o_.prompt)},
              {"request", std::move(request)},
              {"finish_reason", choice.finishReason.empty() ? json() : json(choice.finishReason)},
              {"usage", usage ? json{{"prompt_tokens", usage->first.promptTokens},
                                     {"completion_tokens", usage->first.completionTokens},
                                     {"shared_by", usage->second}}
                              : json()},
              {"latency_s", seconds},
              {"attempts", attempts},
              {"request_key", p.keys.at(sample)}};
    if (!error.empty()) j["error"] = error;
    file_.append(j.dump(-1, ' ', false, json::error_handler_t::replace));
    ++recorded_;
    if (!error.empty()) ++failed_;
    if (usage) {
      promptTokens_ += usage->first.promptTokens;
      completionTokens_ += usage->first.completionTokens;
    } else {
      ++usageMissing_;
    }
    progress_.advance();
    updateProgress();
  }

  void updateProgress() {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    progress_.setSuffix(fmt::format("{} in flight, {:.0f} tok/s, {} retries", inFlight_.load(),
                                    elapsed > 0 ? static_cast<double>(completionTokens_.load()) / elapsed : 0.0, retries_.load()));
  }

  const EndpointGenerateOptions& o_;
  std::vector<PlannedProblem> problems_;
  SampleFile& file_;
  std::string key_;
  std::vector<std::string> headers_;
  std::string url_;
  ProgressBar progress_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Unit> queue_;
  int active_ = 0;
  std::string fatal_;
  bool budgetSpent_ = false;
  std::atomic<std::size_t> reserved_{0};
  std::atomic<int> inFlight_{0};
  std::atomic<std::size_t> requests_{0}, retries_{0}, failed_{0}, usageMissing_{0}, recorded_{0};
  std::atomic<std::int64_t> promptTokens_{0}, completionTokens_{0};
  std::atomic<bool> nIgnored_{false};
};

}  // namespace

std::string sampleRequestKey(const std::vector<ChatMessage>& messages, const ChatParameters& parameters, std::int64_t sample) {
  json m = json::array();
  for (const auto& message : messages) m.push_back({message.role, message.content});
  const json identity = {{"model", parameters.model},
                         {"messages", m},
                         {"temperature", parameters.temperature},
                         {"top_p", parameters.topP},
                         {"max_tokens", parameters.maxTokens},
                         {"seed", parameters.seed ? json(*parameters.seed) : json()},
                         {"stop", parameters.stop},
                         {"sample", sample}};
  return hashString(identity.dump(-1, ' ', false, json::error_handler_t::replace)).hex();
}

std::vector<std::string> listServedModels(const EndpointConfig& endpoint) {
  HttpClient client(HttpClientOptions{.caBundle = endpoint.caBundle});
  const HttpResponse r = client.get(trimSlash(endpoint.baseUrl) + "/models", requestHeaders(apiKey(endpoint)), std::chrono::seconds(10));
  return modelIds(r);
}

EndpointGenerateSummary runEndpointJobs(const EndpointGenerateOptions& o, const std::vector<ChatJob>& jobs) {
  const auto start = Clock::now();
  validate(o);
  (void)apiKey(o.endpoint);  // a missing key is an error before anything is written
  std::vector<PlannedProblem> problems;
  SampleFile::Plan plan;
  for (const auto& job : jobs) {
    PlannedProblem p{job.problem, job.messages, {}};
    for (const auto s : job.samples) {
      p.keys[s] = sampleRequestKey(p.messages, o.parameters, s);
      plan[{p.id, s}] = p.keys[s];
    }
    problems.push_back(std::move(p));
  }
  SampleFile file(o.outFile, plan, o.resume);
  std::deque<Unit> units;
  std::size_t toRequest = 0;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    Unit unit{i, {}};
    for (const auto s : jobs[i].samples) {
      if (!file.finished(problems[i].id, s)) unit.samples.push_back(s);
    }
    toRequest += unit.samples.size();
    if (unit.samples.empty()) continue;
    if (o.useN) {
      units.push_back(std::move(unit));
    } else {
      for (const auto s : unit.samples) units.push_back(Unit{i, {s}});
    }
  }
  EndpointRun run(o, std::move(problems), file, toRequest);
  run.run(std::move(units));
  EndpointGenerateSummary summary = run.summary();
  summary.problems = jobs.size();
  summary.reused = file.kept();
  summary.replaced = file.replaced();
  summary.samples = summary.reused + run.recorded();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

EndpointGenerateSummary runEndpointGeneration(const EndpointGenerateOptions& o) {
  validate(o);
  return runEndpointJobs(o, suiteChatJobs(o.problemsDir, o.prompt, o.samples, o.promptContext));
}

}  // namespace cuset
