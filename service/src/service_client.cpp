#include "cuset/service/service_client.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <thread>

#include "cuset/common/error.hpp"

namespace cuset::service {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// One exchange, retried while the server is away or says to wait (429, 503), for `patience` in all.
json exchange(const ServiceClientOptions& o, const std::string& method, const std::string& path, const json* body, int& status) {
  const auto deadline = Clock::now() + o.patience;
  std::string last;
  for (;;) {
    httplib::Client client(o.url);
    client.set_connection_timeout(10);
    client.set_read_timeout(120);
    httplib::Headers headers;
    if (!o.token.empty()) headers.emplace("Authorization", "Bearer " + o.token);
    const httplib::Result r = method == "POST" ? client.Post(path, headers, body->dump(), "application/json") : client.Get(path, headers);
    std::chrono::seconds wait{2};
    if (!r) {
      last = fmt::format("no answer ({})", httplib::to_string(r.error()));
    } else if (r->status == 429 || r->status == 503) {
      last = fmt::format("HTTP {}: {}", r->status, r->body.substr(0, 300));
      if (const auto after = r->get_header_value("Retry-After"); !after.empty())
        wait = std::chrono::seconds(std::clamp(std::atoi(after.c_str()), 1, 60));
    } else {
      status = r->status;
      json answer = json::parse(r->body, nullptr, false);
      if (answer.is_discarded()) throw makeError("{}{}: HTTP {} with a body that is not JSON: {}", o.url, path, r->status, r->body.substr(0, 300));
      return answer;
    }
    if (Clock::now() + wait > deadline) throw makeError("{}{}: gave up after {} s: {}", o.url, path, o.patience.count(), last);
    std::this_thread::sleep_for(wait);
  }
}

std::string detailOf(const json& answer) { return answer.is_object() ? answer.value("detail", answer.dump()) : answer.dump(); }

}  // namespace

ServiceClient::ServiceClient(ServiceClientOptions options) : options_(std::move(options)) {
  while (options_.url.ends_with('/')) options_.url.pop_back();
  if (!options_.url.starts_with("http://") || options_.url.size() <= 7)
    throw makeError("--server {}: a cuset serve address is http://host:port", options_.url);
}

json ServiceClient::health() const {
  int status = 0;
  const json h = exchange(options_, "GET", "/health", nullptr, status);
  if (status != 200 || !h.is_object() || h.value("status", "") != "healthy")
    throw makeError("{}/health: not a healthy cuset serve (HTTP {}: {})", options_.url, status, h.dump().substr(0, 300));
  return h;
}

json ServiceClient::run(const json& request) const {
  int status = 0;
  const json submitted = exchange(options_, "POST", "/v1/tasks", &request, status);
  if (status != 202 && status != 200) throw makeError("{}/v1/tasks: HTTP {}: {}", options_.url, status, detailOf(submitted));
  const std::string id = submitted.value("task_id", "");
  for (;;) {
    const json task = exchange(options_, "GET", "/v1/tasks/" + id, nullptr, status);
    if (status != 200) throw makeError("{}/v1/tasks/{}: HTTP {}: {}", options_.url, id, status, detailOf(task));
    const std::string state = task.value("status", "");
    if (state == "completed" || state == "failed" || state == "cancelled") return task;
    std::this_thread::sleep_for(options_.pollInterval);
  }
}

}  // namespace cuset::service
