#pragma once
// What `cuset serve` and `cuset worker` need of a queue of tasks (docs/serve.md), with two
// implementations: the embedded one of a single machine (task_store.hpp, files in the state folder) and
// Redis Streams for a fleet (redis_queue.hpp). The HTTP side submits and waits; workers take a task as a
// lease, run it, and finish it.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
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
std::optional<TaskState> parseTaskState(std::string_view name);

// A task id names a file: 1-128 characters of [A-Za-z0-9._-], not starting with '.'.
bool validTaskId(std::string_view id);

double unixNow();

struct TaskRecord {
  std::string id;
  TaskState state = TaskState::queued;
  Priority priority = Priority::normal;
  nlohmann::json request;                                 // as validated (kernelgym_api.hpp)
  nlohmann::json result;                                  // once finished: the response body
  double submittedAt = 0, startedAt = 0, finishedAt = 0;  // unix seconds
  std::uint64_t sequence = 0;                             // submission order
  bool finished() const { return state == TaskState::completed || state == TaskState::failed || state == TaskState::cancelled; }
};

// A task a worker has taken: it runs it and hands it back to finish(). `cancel` becomes true when a
// client cancels the task or the queue stops; `handle` is the queue's own (which stream entry).
struct Lease {
  TaskRecord task;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  std::string handle;
};

struct QueueCounts {
  std::size_t queued = 0, processing = 0, completed = 0, failed = 0, cancelled = 0;
  std::size_t workers = 0;  // workers serving the queue now (the fleet's, for Redis)
};

// What both queues bound in the same way.
struct QueueLimits {
  std::size_t maxQueued = 1000;                            // past it, submit answers queueFull (HTTP 429)
  std::chrono::seconds resultTtl{std::chrono::hours(24)};  // finished tasks are forgotten after this
  // A waiting priority is passed over at most this many times in a row by higher ones (per consumer).
  int starvationBound = 8;
};

class TaskQueue {
 public:
  virtual ~TaskQueue() = default;

  enum class Submitted { accepted, existing, queueFull };
  // A new task is queued. An id already known is returned as it is (`existing`), unless forceRefresh,
  // which queues it again once it has finished (a task still queued or running is returned as it is).
  virtual Submitted submit(const std::string& id, Priority priority, nlohmann::json request, bool forceRefresh, TaskRecord& out) = 0;
  // The next task by priority, now processing; nullopt after `wait` or once stopped.
  virtual std::optional<Lease> take(std::chrono::milliseconds wait) = 0;
  // The task's one result: a second finish of the same task (a worker thought dead that was only slow)
  // changes nothing.
  virtual void finish(const Lease& lease, TaskState state, nlohmann::json result) = 0;
  // Queued: cancelled at once. Processing: cancellation requested (its worker stops it and finishes it
  // as cancelled). False for an unknown or finished task.
  virtual bool cancel(const std::string& id) = 0;
  virtual std::optional<TaskRecord> get(const std::string& id) = 0;
  // The task once finished, or as it stands after `timeout`; nullopt when unknown.
  virtual std::optional<TaskRecord> waitFinished(const std::string& id, std::chrono::milliseconds timeout) = 0;
  virtual QueueCounts counts() const = 0;
  // What the queue is, for messages: "embedded" or the Redis address (without a password).
  virtual std::string describe() const = 0;
  // Wakes every waiter and raises the cancel flag of every lease; take() returns nullopt from now on.
  // Work in progress stays unfinished in the queue and runs again (at the next start, or on another
  // worker).
  virtual void stop() = 0;
  virtual bool stopped() const = 0;
};

// Strict priority with a bound on starvation: a waiting priority passed over `bound` times in a row by
// higher ones goes first next time. One picker per consumer (a worker thread of a fleet keeps its own).
class PriorityPicker {
 public:
  explicit PriorityPicker(int bound) : bound_(bound) {}
  // The priorities in the order to look for a task.
  std::array<Priority, 3> order() const;
  // `chosen` was taken; `waiting[p]` says whether priority p had tasks (an unknown one counts as waiting).
  void taken(Priority chosen, const std::array<bool, 3>& waiting);

 private:
  int bound_;
  std::array<int, 3> passedOver_{};  // by Priority
};

}  // namespace cuset::service
