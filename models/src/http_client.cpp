#include "cuset/models/http_client.hpp"

#include <curl/curl.h>

#include <charconv>
#include <mutex>

#include "cuset/common/error.hpp"

namespace cuset {
namespace {

// curl_global_init is not thread-safe and must run once before any handle exists.
void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
      throw makeError("libcurl could not initialise: {}", curl_easy_strerror(rc));
    }
  });
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

struct Exchange {
  HttpResponse* response;
  std::chrono::system_clock::time_point now;
};

std::size_t onBody(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<Exchange*>(user)->response->body.append(data, size * count);
  return size * count;
}

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  const std::string_view line(data, size * count);
  if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name == "retry-after") exchange->response->retryAfterSeconds = parseRetryAfter(trim(line.substr(colon + 1)), exchange->now);
  }
  return size * count;
}

}  // namespace

struct HttpClient::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl) curl_easy_cleanup(curl);
  }
};

HttpClient::HttpClient(HttpClientOptions options) : handle_(std::make_unique<Handle>()), options_(std::move(options)) {
  initCurlOnce();
  handle_->curl = curl_easy_init();
  if (!handle_->curl) throw Error("libcurl could not create a handle (out of memory?)");
}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::post(const std::string& url, const std::vector<std::string>& headers, std::string_view body,
                              std::chrono::milliseconds timeout) {
  return perform(url, headers, &body, timeout);
}

HttpResponse HttpClient::get(const std::string& url, const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  return perform(url, headers, nullptr, timeout);
}

HttpResponse HttpClient::perform(const std::string& url, const std::vector<std::string>& headers, const std::string_view* body,
                                 std::chrono::milliseconds timeout) {
  CURL* curl = handle_->curl;
  HttpResponse response;
  Exchange exchange{&response, std::chrono::system_clock::now()};
  std::unique_ptr<curl_slist, SlistDeleter> list;
  for (const auto& h : headers) {
    curl_slist* grown = curl_slist_append(list.get(), h.c_str());
    if (!grown) throw Error("libcurl: out of memory building request headers");
    (void)list.release();
    list.reset(grown);
  }
  // Options are reset per request except the connection cache, which keeps the connection alive.
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // worker threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connectTimeout.count()));
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!options_.caBundle.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.caBundle.c_str());
  if (body) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  const auto start = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(curl);
  response.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  if (rc != CURLE_OK) {
    response.transportError = curl_easy_strerror(rc);
    response.timedOut = rc == CURLE_OPERATION_TIMEDOUT;
    // An answer whose body ends early (the server or a proxy closed the connection mid-body).
    response.bodyCut = response.status != 0 && (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR);
    if (!response.bodyCut) response.status = 0;
  }
  return response;
}

std::optional<double> parseRetryAfter(std::string_view value, std::chrono::system_clock::time_point now) {
  value = trim(value);
  if (value.empty()) return std::nullopt;
  double seconds = 0;
  if (const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      ec == std::errc() && end == value.data() + value.size()) {
    return seconds >= 0 ? std::optional(seconds) : std::nullopt;
  }
  const std::string text(value);
  const time_t when = curl_getdate(text.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  const double delta = std::chrono::duration<double>(std::chrono::system_clock::from_time_t(when) - now).count();
  return delta > 0 ? delta : 0.0;
}

}  // namespace cuset
