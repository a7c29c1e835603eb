// The HTTP side of `cuset serve` (cpp-httplib, docs/dependencies.md): routes, authentication, limits.
#include "cuset/service/serve.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/version.hpp"
#include "cuset/service/rate_limiter.hpp"
#include "cuset/service/redis_queue.hpp"
#include "cuset/service/reward.hpp"
#include "cuset/service/token_file.hpp"
#include "cuset/service/worker_pool.hpp"
#include "openapi_document.hpp"
#include "redis_client.hpp"

namespace cuset::service {
namespace {

using nlohmann::json;

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void refuse(httplib::Response& res, int status, const std::string& code, const std::string& message) { reply(res, status, errorBody(code, message)); }

// Constant time in the known token's length: how much of a guess was right does not show in the time.
bool sameToken(const std::string& given, const std::string& known) {
  unsigned char diff = given.size() != known.size() ? 1 : 0;
  for (std::size_t i = 0; i < known.size(); ++i) diff |= static_cast<unsigned char>(known[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

// What KernelGYM's API shows of a finished task: its fields, without the full record and the stage
// times /v1 adds.
json kernelGymView(json result) {
  if (result.is_object()) {
    result.erase("record");
    result.erase("stages");
  }
  return result;
}

class Server {
 public:
  explicit Server(ServeOptions options)
      : options_(std::move(options)), store_(makeQueue(options_)), runner_(options_.runner), limiter_(options_.ratePerToken) {
    if (!options_.tokenFile.empty()) tokens_ = readBearerTokens(options_.tokenFile);
    if (tokens_.empty() && !isLoopback(options_.host)) {
      throw makeError("cuset serve listens on {} beyond this machine: give --token-file (one bearer token per line)", options_.host);
    }
  }

  void run() {
    // httplib owns the queue it is handed (its API takes a raw pointer). /evaluate blocks a connection
    // until its task finishes, so there are many more connection threads than workers.
    http_.new_task_queue = [] { return new httplib::ThreadPool(128); };
    http_.set_payload_max_length(options_.maxBodyBytes);
    // cpp-httplib sets SO_REUSEPORT by default, which lets a second server bind the same port and take
    // half the requests with its own queue: only SO_REUSEADDR (a restart need not wait for TIME_WAIT).
    http_.set_socket_options([this](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listening_ = sock;  // the last one made is the one bound
    });
    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) { return admit(req, res); });
    // What cpp-httplib answers itself (no route, a body over the limit) is a JSON error too.
    http_.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 413)
        return refuse(res, 413, "VALIDATION_ERROR", fmt::format("the body is over the limit of {} bytes", options_.maxBodyBytes));
      if (res.status == 404) return refuse(res, 404, "NOT_FOUND", "no such route (GET /openapi.json lists them)");
      refuse(res, res.status, "VALIDATION_ERROR", fmt::format("HTTP {}", res.status));
    });
    // Redis away (a fleet's queue restarting): 503, try again shortly; any other failure: 500, said.
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      try {
        std::rethrow_exception(ep);
      } catch (const RedisUnavailable& e) {
        res.set_header("Retry-After", "5");
        refuse(res, 503, "QUEUE_UNAVAILABLE", e.what());
      } catch (const std::exception& e) {
        refuse(res, 500, "INTERNAL_ERROR", e.what());
      }
    });
    routes();
    const int port =
        options_.port == 0 ? http_.bind_to_any_port(options_.host) : (http_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port < 0) throw makeError("cannot listen on {}:{} (in use, or not an address of this machine)", options_.host, options_.port);
    // Debian's cpp-httplib (a library, its CPPHTTPLIB_LISTEN_BACKLOG fixed at 5) listens with a backlog
    // of 5: a trainer's 32-64 clients connecting at once overflow it, and some are reset. Listening again
    // on the bound socket only raises the backlog.
    if (listening_ >= 0) ::listen(listening_, 1024);
    WorkerPool workers(*store_, runner_, options_.jobs);
    std::cout << fmt::format("cuset serve: listening on http://{}:{} ({} worker(s), backend {}, queue {}, state {})", options_.host, port,
                             options_.jobs, options_.runner.backend, store_->describe(), options_.runner.stateDir.string())
              << std::endl;
    std::thread signals([this] {
      waitForStopSignal();
      std::cerr << "cuset serve: stopping (work in progress is queued again)" << std::endl;
      store_->stop();
      http_.stop();
    });
    http_.listen_after_bind();
    signals.join();
  }

 private:
  static std::unique_ptr<TaskQueue> makeQueue(const ServeOptions& o) {
    if (!o.queueUrl.empty()) {
      RedisQueueOptions r;
      r.url = o.queueUrl;
      r.serverBackend = o.runner.backend;
      if (o.jobs > 0) r.workerBackend = o.runner.backend;
      r.workers = o.jobs;
      static_cast<QueueLimits&>(r) = o.store;
      r.reclaimAfter = o.reclaimAfter;
      return std::make_unique<RedisTaskQueue>(r);
    }
    if (o.jobs == 0) throw Error("cuset serve --jobs 0 runs no workers: only with --queue redis://..., whose workers are elsewhere");
    TaskStoreOptions s = o.store;
    if (s.dir.empty()) s.dir = o.runner.stateDir / "tasks";
    return std::make_unique<TaskStore>(s);
  }

  httplib::Server::HandlerResponse admit(const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/health" || req.path == "/openapi.json") return httplib::Server::HandlerResponse::Unhandled;
    std::string who = req.remote_addr;
    if (!tokens_.empty()) {
      const std::string header = req.get_header_value("Authorization");
      const std::string token = header.starts_with("Bearer ") ? header.substr(7) : std::string();
      const bool known = std::any_of(tokens_.begin(), tokens_.end(), [&](const std::string& t) { return sameToken(token, t); });
      if (!known) {
        res.set_header("WWW-Authenticate", "Bearer");
        refuse(res, 401, "AUTHENTICATION_ERROR", "a bearer token this server knows is required (Authorization: Bearer <token>)");
        return httplib::Server::HandlerResponse::Handled;
      }
      who = token;
    }
    if (const double wait = limiter_.take(who); wait > 0) {
      res.set_header("Retry-After", std::to_string(static_cast<int>(std::ceil(wait))));
      refuse(res, 429, "RATE_LIMITED", fmt::format("over {} requests per second for this client", options_.ratePerToken));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  // The body as JSON, or the 400 it is.
  std::optional<json> body(const httplib::Request& req, httplib::Response& res) {
    try {
      return json::parse(req.body);
    } catch (const json::parse_error& e) {
      refuse(res, 400, "VALIDATION_ERROR", fmt::format("the body is not JSON: {}", e.what()));
      return std::nullopt;
    }
  }

  // A task request checked (413 for code over the limit, 400 naming the field), or the error response
  // already written. `where` prefixes the message ("tasks[3]: ").
  std::optional<json> validated(const json& request, httplib::Response& res, bool taskIdRequired, const std::string& where = {}) {
    for (const char* field : {"kernel_code", "reference_code"}) {
      if (request.is_object() && request.contains(field) && request[field].is_string() &&
          request[field].get_ref<const std::string&>().size() > options_.limits.maxCodeBytes) {
        refuse(res, 413, "VALIDATION_ERROR", fmt::format("{}'{}' is over the limit of {} bytes", where, field, options_.limits.maxCodeBytes));
        return std::nullopt;
      }
    }
    auto valid = validateTaskRequest(request, options_.limits, taskIdRequired);
    if (!valid) {
      refuse(res, 400, "VALIDATION_ERROR", where + valid.error());
      return std::nullopt;
    }
    return std::move(*valid);
  }

  // A task of a request, submitted; or the error response already written.
  std::optional<TaskRecord> submit(const json& request, httplib::Response& res, bool taskIdRequired, const std::string& reward = {}) {
    auto valid = validated(request, res, taskIdRequired);
    if (!valid) return std::nullopt;
    return submitValid(std::move(*valid), res, reward);
  }

  std::optional<TaskRecord> submitValid(json valid, httplib::Response& res, const std::string& reward = {}) {
    if (!reward.empty()) valid["reward"] = reward;
    TaskRecord record;
    const std::string id = valid["task_id"];
    const auto outcome = store_->submit(id, *parsePriority(valid["priority"].get<std::string>()), valid, valid["force_refresh"], record);
    if (outcome == TaskQueue::Submitted::queueFull) {
      res.set_header("Retry-After", "10");
      refuse(res, 429, "QUEUE_FULL", fmt::format("the queue holds its limit of {} tasks", options_.store.maxQueued));
      return std::nullopt;
    }
    return record;
  }

  std::chrono::milliseconds waitLimit(const TaskRecord& r) const {
    return std::chrono::seconds(r.request.value("timeout", 300)) + options_.runner.importTimeout + std::chrono::seconds(60);
  }

  json finishedOrStatus(const TaskRecord& r) const {
    if (r.finished()) return kernelGymView(r.result);
    return {{"task_id", r.id}, {"status", taskStateName(r.state)}};
  }

  void routes() {
    http_.Post("/evaluate", [this](const httplib::Request& req, httplib::Response& res) {
      const auto request = body(req, res);
      if (!request) return;
      const auto task = submit(*request, res, true);
      if (!task) return;
      const auto done = store_->waitFinished(task->id, waitLimit(*task));
      if (!done || !done->finished()) return refuse(res, 504, "TIMEOUT_ERROR", "the task did not finish in time; ask GET /results/" + task->id);
      reply(res, 200, kernelGymView(done->result));
    });
    http_.Post("/evaluate/batch", [this](const httplib::Request& req, httplib::Response& res) { batch(req, res); });
    http_.Get(R"(/status/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const auto r = store_->get(req.matches[1]);
      if (!r) return refuse(res, 404, "NOT_FOUND", fmt::format("no task '{}'", req.matches[1].str()));
      reply(res, 200,
            {{"task_id", r->id},
             {"status", taskStateName(r->state)},
             {"priority", priorityName(r->priority)},
             {"submitted_at", r->submittedAt},
             {"started_at", r->startedAt},
             {"finished_at", r->finishedAt}});
    });
    http_.Get(R"(/results/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const auto r = store_->get(req.matches[1]);
      if (!r) return refuse(res, 404, "NOT_FOUND", fmt::format("no task '{}'", req.matches[1].str()));
      reply(res, r->finished() ? 200 : 202, finishedOrStatus(*r));
    });
    http_.Delete(R"(/tasks/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string id = req.matches[1];
      const auto r = store_->get(id);
      if (!r) return refuse(res, 404, "NOT_FOUND", fmt::format("no task '{}'", id));
      if (!store_->cancel(id)) return refuse(res, 409, "CONFLICT", fmt::format("task '{}' has finished ({})", id, taskStateName(r->state)));
      reply(res, 200, {{"task_id", id}, {"cancelled", true}});
    });
    http_.Get("/openapi.json", [](const httplib::Request&, httplib::Response& res) { res.set_content(assets::openapiJson, "application/json"); });
    http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      const auto c = store_->counts();
      reply(res, 200,
            {{"status", "healthy"},
             {"version", gitRevision()},
             {"backend", options_.runner.backend},
             {"workers", options_.queueUrl.empty() ? options_.jobs : c.workers},
             {"queue",
              {{"queued", c.queued}, {"processing", c.processing}, {"completed", c.completed}, {"failed", c.failed}, {"cancelled", c.cancelled}}}});
    });
    // The native API: asynchronous, with this project's verdict and a reward.
    http_.Post("/v1/tasks", [this](const httplib::Request& req, httplib::Response& res) {
      auto request = body(req, res);
      if (!request) return;
      std::string formula = "kevin";
      if (request->is_object() && request->contains("reward")) {
        const auto& r = (*request)["reward"];
        if (!r.is_string() || !rewardFormulaKnown(r.get<std::string>()))
          return refuse(res, 400, "VALIDATION_ERROR", fmt::format("'reward' must be one of {}, not {}", rewardFormulaList(), r.dump()));
        formula = r.get<std::string>();
        request->erase("reward");
      }
      const auto task = submit(*request, res, false, formula);
      if (!task) return;
      reply(res, 202, {{"task_id", task->id}, {"status", taskStateName(task->state)}});
    });
    http_.Get(R"(/v1/tasks/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const auto r = store_->get(req.matches[1]);
      if (!r) return refuse(res, 404, "NOT_FOUND", fmt::format("no task '{}'", req.matches[1].str()));
      reply(res, 200, nativeView(*r));
    });
    http_.Get("/v1/events", [this](const httplib::Request& req, httplib::Response& res) { events(req, res); });
  }

  // A task as /v1 shows it: with this project's verdict, reason and reward once finished.
  static json nativeView(const TaskRecord& r) {
    json out = {{"task_id", r.id}, {"status", taskStateName(r.state)}, {"priority", priorityName(r.priority)}};
    if (r.finished()) {
      const json& result = r.result;
      out["result"] = kernelGymView(result);
      if (result.contains("record")) out["record"] = result["record"];
      if (result.contains("stages")) {
        out["stages"] = result["stages"];
        out["stages"]["queue_ms"] = std::round(std::max(0.0, r.startedAt - r.submittedAt) * 10000) / 10;
      }
      out["verdict"] = result.value("metadata", json::object()).value("verdict", json());
      out["reason"] = result.value("metadata", json::object()).value("reason", json());
      const std::string formula = r.request.value("reward", "kevin");
      out["reward"] = {{"formula", formula}, {"value", rewardFor(formula, result)}};
    }
    return out;
  }

  // GET /v1/events?tasks=a,b,c: server-sent events, one `result` event (the /v1 task) per task as it
  // finishes, in the order they finish, then `end`; a comment every 15 s keeps idle connections open.
  // A trainer takes each reward as it comes instead of waiting for a batch's slowest task.
  void events(const httplib::Request& req, httplib::Response& res) {
    std::vector<std::string> ids;
    std::stringstream list(req.get_param_value("tasks"));
    for (std::string part; std::getline(list, part, ',');) {
      if (!part.empty() && std::find(ids.begin(), ids.end(), part) == ids.end()) ids.push_back(part);
    }
    if (ids.empty() || ids.size() > options_.limits.maxBatchTasks)
      return refuse(res, 400, "VALIDATION_ERROR", fmt::format("'tasks' must name 1 to {} task ids, comma-separated", options_.limits.maxBatchTasks));
    for (const auto& id : ids) {
      if (!store_->get(id)) return refuse(res, 404, "NOT_FOUND", fmt::format("no task '{}'", id));
    }
    auto pending = std::make_shared<std::vector<std::string>>(std::move(ids));
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, pending](std::size_t, httplib::DataSink& sink) {
      const auto quietUntil = std::chrono::steady_clock::now() + std::chrono::seconds(15);
      for (;;) {
        bool sent = false;
        for (auto it = pending->begin(); it != pending->end();) {
          const auto r = store_->get(*it);
          if (r && !r->finished()) {
            ++it;
            continue;
          }
          // A task forgotten meanwhile (its result's time to live passed) ends its wait too.
          const std::string event =
              r ? "event: result\ndata: " + nativeView(*r).dump() + "\n\n" : "event: missing\ndata: " + json{{"task_id", *it}}.dump() + "\n\n";
          if (!sink.write(event.data(), event.size())) return false;
          it = pending->erase(it);
          sent = true;
        }
        if (pending->empty()) {
          const std::string end = "event: end\ndata: {}\n\n";
          sink.write(end.data(), end.size());
          sink.done();
          return true;
        }
        if (sent) return true;
        if (!sink.is_writable()) return false;
        if (std::chrono::steady_clock::now() >= quietUntil) {
          const std::string keepAlive = ": waiting\n\n";
          return sink.write(keepAlive.data(), keepAlive.size());
        }
        store_->waitFinished(pending->front(), std::chrono::milliseconds(250));
      }
    });
  }

  void batch(const httplib::Request& req, httplib::Response& res) {
    const auto request = body(req, res);
    if (!request) return;
    if (!request->is_object() || !request->contains("tasks") || !(*request)["tasks"].is_array())
      return refuse(res, 400, "VALIDATION_ERROR", "'tasks' must be a list of task requests");
    const json& tasks = (*request)["tasks"];
    if (tasks.empty() || tasks.size() > options_.limits.maxBatchTasks)
      return refuse(res, 400, "VALIDATION_ERROR",
                    fmt::format("'tasks' must hold 1 to {} tasks, not {}", options_.limits.maxBatchTasks, tasks.size()));
    for (const auto& [key, v] : request->items()) {
      if (key != "batch_id" && key != "tasks") return refuse(res, 400, "VALIDATION_ERROR", fmt::format("unknown field '{}'", key));
    }
    if (request->contains("batch_id") && !(*request)["batch_id"].is_string())
      return refuse(res, 400, "VALIDATION_ERROR", "'batch_id' must be a string");
    // Every task validated before any is queued: a batch is accepted whole or not at all.
    std::vector<json> valid;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      auto v = validated(tasks[i], res, true, fmt::format("tasks[{}]: ", i));
      if (!v) return;
      valid.push_back(std::move(*v));
    }
    std::vector<TaskRecord> submitted;
    for (auto& v : valid) {
      auto task = submitValid(std::move(v), res);
      if (!task) return;
      submitted.push_back(*task);
    }
    json results = json::array();
    std::size_t completed = 0, failed = 0;
    for (const auto& t : submitted) {  // they run in parallel on the workers; waiting in order costs nothing
      const auto done = store_->waitFinished(t.id, waitLimit(t));
      const json r = done && done->finished() ? kernelGymView(done->result) : json{{"task_id", t.id}, {"status", "timeout"}};
      (r.value("status", "") == "completed" ? completed : failed) += 1;
      results.push_back(r);
    }
    reply(res, 200,
          {{"batch_id", request->value("batch_id", "")},
           {"results", results},
           {"total", results.size()},
           {"completed", completed},
           {"failed", failed}});
  }

  ServeOptions options_;
  std::unique_ptr<TaskQueue> store_;
  TaskRunner runner_;
  socket_t listening_ = -1;
  RateLimiter limiter_;
  std::vector<std::string> tokens_;
  httplib::Server http_;
};

}  // namespace

bool isLoopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.starts_with("127."); }

void serve(ServeOptions options) {
  blockStopSignals();  // every thread started from here on: one thread waits for them
  Server(std::move(options)).run();
}

}  // namespace cuset::service
