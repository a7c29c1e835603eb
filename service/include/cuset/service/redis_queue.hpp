#pragma once
// The queue of a fleet (docs/serve.md "A fleet"): tasks in Redis Streams, one stream per kind of worker
// and priority, read by consumer groups, so that `cuset serve --queue redis://...` accepts work and any
// number of `cuset worker` processes on other machines do it. A worker keeps the tasks it runs alive with
// a heartbeat; one it stops hearing of (a worker killed, a machine lost) is reclaimed by another after
// `reclaimAfter` and run again, and a task has exactly one result whatever runs twice. Each task is a
// Redis hash that expires once finished; every change of state is one Lua script, atomic in Redis.
#include <chrono>
#include <memory>
#include <string>

#include "cuset/service/task_queue.hpp"

namespace cuset::service {

struct RedisQueueOptions : QueueLimits {
  std::string url = "redis://127.0.0.1:6379";
  // What a request's backend "cuda" (KernelGYM's default) asks for, as the server routes it: "sim" (a CPU
  // worker's verdict), "cuda" (a GPU worker's timings) or "auto" (any worker, on its own backend).
  std::string serverBackend = "auto";
  // The backend this process's workers run (sim, cuda, auto): which tasks take() may return. Empty for a
  // server that runs no workers.
  std::string workerBackend;
  std::size_t workers = 0;                      // this process's workers, counted in /health while it lives
  std::chrono::seconds reclaimAfter{60};        // a task whose worker has been silent this long runs elsewhere
  int maxDeliveries = 3;                        // a task that has killed this many workers fails
  std::chrono::milliseconds pollInterval{100};  // how often waitFinished looks
  bool heartbeat = true;                        // false: a worker that never says it is alive (tests of reclaiming)
};

class RedisTaskQueue final : public TaskQueue {
 public:
  // Throws cuset::Error for a malformed URL; Redis itself may come later (calls wait for it, or answer
  // RedisUnavailable to the HTTP side, which says 503).
  explicit RedisTaskQueue(RedisQueueOptions options);
  ~RedisTaskQueue() override;

  Submitted submit(const std::string& id, Priority priority, nlohmann::json request, bool forceRefresh, TaskRecord& out) override;
  std::optional<Lease> take(std::chrono::milliseconds wait) override;
  void finish(const Lease& lease, TaskState state, nlohmann::json result) override;
  bool cancel(const std::string& id) override;
  std::optional<TaskRecord> get(const std::string& id) override;
  std::optional<TaskRecord> waitFinished(const std::string& id, std::chrono::milliseconds timeout) override;
  QueueCounts counts() const override;
  // The tasks this process is running go back to their streams at once, for another worker.
  void stop() override;
  bool stopped() const override;
  std::string describe() const override;  // the address, without a password

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Which streams a worker of `backend` reads, in the order it prefers them ("sim", "gpu", "any"), and
// which one a request goes to: "sim" and "gpu" as asked, "cuda" as the server's backend says.
std::vector<std::string> workerClasses(const std::string& workerBackend);
std::string requestClass(const std::string& requestBackend, const std::string& serverBackend);

}  // namespace cuset::service
