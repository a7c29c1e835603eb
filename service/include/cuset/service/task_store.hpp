#pragma once
// `cuset serve`'s embedded queue (docs/serve.md): every task a client submitted, its state and its
// result, one JSON file per task in the server's state folder, written atomically at every change, so
// that a server restarted with work queued loses nothing (a task it was running is queued again). Tasks
// leave by priority (high, normal, low) with a bound on starvation, and finished ones expire.
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

#include "cuset/service/task_queue.hpp"

namespace cuset::service {

struct TaskStoreOptions : QueueLimits {
  std::filesystem::path dir;  // one <id>.json per task
};

class TaskStore final : public TaskQueue {
 public:
  explicit TaskStore(TaskStoreOptions options);  // loads the folder; throws cuset::Error naming a bad file

  Submitted submit(const std::string& id, Priority priority, nlohmann::json request, bool forceRefresh, TaskRecord& out) override;
  std::optional<Lease> take(std::chrono::milliseconds wait) override;
  void finish(const Lease& lease, TaskState state, nlohmann::json result) override;
  bool cancel(const std::string& id) override;
  std::optional<TaskRecord> get(const std::string& id) override;
  std::optional<TaskRecord> waitFinished(const std::string& id, std::chrono::milliseconds timeout) override;
  QueueCounts counts() const override;
  std::string describe() const override { return "embedded"; }
  // The store's files keep the tasks being processed as processing: they run at the next start.
  void stop() override;
  bool stopped() const override;

 private:
  void persist(const TaskRecord& r) const;
  void expire();  // with mu_ held
  std::filesystem::path fileOf(const std::string& id) const;

  TaskStoreOptions options_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, TaskRecord> tasks_;
  std::array<std::deque<std::string>, 3> queues_;  // by Priority
  PriorityPicker picker_;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> cancelFlags_;  // of the tasks being processed
  std::uint64_t sequence_ = 0;
  bool stopped_ = false;
};

}  // namespace cuset::service
