#pragma once
// `cuset serve`'s embedded queue (docs/serve.md): every task a client submitted, its state and its
// result, one JSON file per task in the server's state folder, written atomically at every change, so
// that a server restarted with work queued loses nothing (a task it was running is queued again). Tasks
// leave by priority (high, normal, low) with a bound on starvation, and finished ones expire.
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cuset::service {

enum class Priority { low, normal, high };
enum class TaskState { queued, processing, completed, failed, cancelled };

std::optional<Priority> parsePriority(std::string_view name);
std::string_view priorityName(Priority p);
std::string_view taskStateName(TaskState s);

// A task id names a file: 1-128 characters of [A-Za-z0-9._-], not starting with '.'.
bool validTaskId(std::string_view id);

struct TaskRecord {
  std::string id;
  TaskState state = TaskState::queued;
  Priority priority = Priority::normal;
  nlohmann::json request;                                 // as validated (task_request.hpp)
  nlohmann::json result;                                  // once finished: the response body
  double submittedAt = 0, startedAt = 0, finishedAt = 0;  // unix seconds
  std::uint64_t sequence = 0;                             // submission order
  bool finished() const { return state == TaskState::completed || state == TaskState::failed || state == TaskState::cancelled; }
};

struct TaskStoreOptions {
  std::filesystem::path dir;                               // one <id>.json per task
  std::size_t maxQueued = 1000;                            // past it, submit answers queueFull (HTTP 429)
  std::chrono::seconds resultTtl{std::chrono::hours(24)};  // finished tasks are forgotten after this
  // A waiting class of lower priority is passed over at most this many times in a row by higher ones.
  int starvationBound = 8;
};

class TaskStore {
 public:
  explicit TaskStore(TaskStoreOptions options);  // loads the folder; throws cuset::Error naming a bad file

  enum class Submitted { accepted, existing, queueFull };
  // A new task is queued. An id already known is returned as it is (`existing`), unless forceRefresh,
  // which queues it again once it has finished (a task still queued or running is returned as it is).
  Submitted submit(const std::string& id, Priority priority, nlohmann::json request, bool forceRefresh, TaskRecord& out);

  // The next task by priority, now processing; nullopt after `wait` or once stopped.
  std::optional<TaskRecord> next(std::chrono::milliseconds wait);
  void finish(const std::string& id, TaskState state, nlohmann::json result);

  // Queued: cancelled at once. Processing: cancellation requested (the runner stops it and finishes it
  // as cancelled). False for an unknown or finished task.
  bool cancel(const std::string& id);
  // The flag cancel() sets for a task being processed (the runner polls it); made by next().
  std::shared_ptr<std::atomic<bool>> cancelFlag(const std::string& id) const;

  std::optional<TaskRecord> get(const std::string& id);
  // The task once finished, or as it stands after `timeout`.
  std::optional<TaskRecord> waitFinished(const std::string& id, std::chrono::milliseconds timeout);

  struct Counts {
    std::size_t queued = 0, processing = 0, completed = 0, failed = 0, cancelled = 0;
  };
  Counts counts() const;
  // Wakes every waiter and raises the cancel flag of every task being processed; next() returns
  // nullopt from now on. The store's files keep those tasks as processing: they run at the next start.
  void stop();
  bool stopped() const;

 private:
  void persist(const TaskRecord& r) const;
  void expire();  // with mu_ held
  std::filesystem::path fileOf(const std::string& id) const;

  TaskStoreOptions options_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, TaskRecord> tasks_;
  std::array<std::deque<std::string>, 3> queues_;  // by Priority
  std::array<int, 3> passedOver_{};
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> cancelFlags_;  // of the tasks being processed
  std::uint64_t sequence_ = 0;
  bool stopped_ = false;
};

double unixNow();

}  // namespace cuset::service
