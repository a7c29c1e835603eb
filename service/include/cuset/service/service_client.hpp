#pragma once
// A client of a running `cuset serve`'s native API (docs/serve.md "cuset eval --server"): submit a
// task, wait for its end. Safe to use from many threads at once (one connection per call).
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace cuset::service {

struct ServiceClientOptions {
  std::string url;    // http://host:port
  std::string token;  // bearer token; empty: none
  // How long an unreachable or overloaded server (no answer, 429, 503) is waited for before the
  // task is given up as a harness failure.
  std::chrono::seconds patience{600};
  std::chrono::milliseconds pollInterval{250};
};

class ServiceClient {
 public:
  explicit ServiceClient(ServiceClientOptions options);  // throws cuset::Error for a URL that is not http://host[:port]
  // GET /health; throws cuset::Error naming the server when it does not answer as a cuset server.
  nlohmann::json health() const;
  // POST /v1/tasks, then GET /v1/tasks/{id} until it finished: that body (with `result` and, once
  // judged, `record`). Throws cuset::Error for what waiting cannot fix (a refused token, a request the
  // server calls invalid, no answer for `patience`).
  nlohmann::json run(const nlohmann::json& request) const;
  const std::string& url() const { return options_.url; }

 private:
  ServiceClientOptions options_;
};

}  // namespace cuset::service
