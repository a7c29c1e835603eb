#pragma once
// A blocking HTTP(S) client on libcurl: one connection kept alive per client, so each worker thread of
// a generation run owns one. Never throws for what the network or server does: the outcome is data
// (status, body, transport error) that the caller classifies into retry, failure or fatal.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuset {

struct HttpClientOptions {
  std::chrono::milliseconds connectTimeout{10'000};
  std::filesystem::path caBundle;  // PEM file of trusted CAs; empty: the system's
};

struct HttpResponse {
  long status = 0;  // 0: no HTTP answer (see transportError)
  std::string body;
  std::string transportError;               // empty when the exchange completed
  bool timedOut = false;                    // the request's time limit passed
  bool bodyCut = false;                     // the connection closed before the announced body was complete
  std::optional<double> retryAfterSeconds;  // Retry-After, as seconds or an HTTP date
  double seconds = 0.0;                     // wall time of the exchange
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `headers` are full lines ("Authorization: Bearer ..."). `timeout` bounds the whole exchange.
  HttpResponse post(const std::string& url, const std::vector<std::string>& headers, std::string_view body, std::chrono::milliseconds timeout);
  HttpResponse get(const std::string& url, const std::vector<std::string>& headers, std::chrono::milliseconds timeout);

 private:
  HttpResponse perform(const std::string& url, const std::vector<std::string>& headers, const std::string_view* body,
                       std::chrono::milliseconds timeout);
  struct Handle;
  std::unique_ptr<Handle> handle_;
  HttpClientOptions options_;
};

// Retry-After's value: delay-seconds or an HTTP date (relative to `now`); nullopt when neither.
std::optional<double> parseRetryAfter(std::string_view value, std::chrono::system_clock::time_point now);

}  // namespace cuset
