#include "cuset/service/task_store.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/service/kernelgym_api.hpp"

namespace cuset::service {
namespace {

namespace fs = std::filesystem;

nlohmann::json toJson(const TaskRecord& r) {
  return {{"task_id", r.id},
          {"state", taskStateName(r.state)},
          {"priority", priorityName(r.priority)},
          {"request", r.request},
          {"result", r.result},
          {"submitted_at", r.submittedAt},
          {"started_at", r.startedAt},
          {"finished_at", r.finishedAt},
          {"sequence", r.sequence}};
}

TaskRecord fromJson(const nlohmann::json& j) {
  TaskRecord r;
  r.id = j.at("task_id").get<std::string>();
  if (!validTaskId(r.id)) throw makeError("a task id '{}' that names no file", r.id);
  const auto state = parseTaskState(j.at("state").get<std::string>());
  if (!state) throw makeError("unknown task state {}", j.at("state").dump());
  r.state = *state;
  const auto p = parsePriority(j.at("priority").get<std::string>());
  if (!p) throw makeError("unknown priority {}", j.at("priority").dump());
  r.priority = *p;
  r.request = j.at("request");
  r.result = j.value("result", nlohmann::json());
  r.submittedAt = j.value("submitted_at", 0.0);
  r.startedAt = j.value("started_at", 0.0);
  r.finishedAt = j.value("finished_at", 0.0);
  r.sequence = j.value("sequence", std::uint64_t{0});
  return r;
}

}  // namespace

TaskStore::TaskStore(TaskStoreOptions options) : options_(std::move(options)), picker_(options_.starvationBound) {
  fs::create_directories(options_.dir);
  std::vector<TaskRecord> loaded;
  for (const auto& e : fs::directory_iterator(options_.dir)) {
    if (e.path().extension() != ".json") continue;  // a half-written ".tmp" of a crash is ignored
    try {
      loaded.push_back(fromJson(nlohmann::json::parse(readFile(e.path()))));
    } catch (const std::exception& ex) {
      throw makeError("{}: not a task of this server ({}); move it away to start", e.path().string(), ex.what());
    }
  }
  std::sort(loaded.begin(), loaded.end(), [](const TaskRecord& a, const TaskRecord& b) { return a.sequence < b.sequence; });
  for (auto& r : loaded) {
    sequence_ = std::max(sequence_, r.sequence);
    if (r.state == TaskState::processing) {  // the server stopped while running it: it runs again
      r.state = TaskState::queued;
      persist(r);
    }
    if (r.state == TaskState::queued) queues_[static_cast<int>(r.priority)].push_back(r.id);
    tasks_[r.id] = std::move(r);
  }
}

fs::path TaskStore::fileOf(const std::string& id) const { return options_.dir / (id + ".json"); }

void TaskStore::persist(const TaskRecord& r) const { writeFileAtomic(fileOf(r.id), toJson(r).dump()); }

TaskStore::Submitted TaskStore::submit(const std::string& id, Priority priority, nlohmann::json request, bool forceRefresh, TaskRecord& out) {
  std::lock_guard lock(mu_);
  expire();
  if (const auto it = tasks_.find(id); it != tasks_.end() && (!forceRefresh || !it->second.finished())) {
    out = it->second;
    return Submitted::existing;
  }
  if (queues_[0].size() + queues_[1].size() + queues_[2].size() >= options_.maxQueued) return Submitted::queueFull;
  TaskRecord r;
  r.id = id;
  r.priority = priority;
  r.request = std::move(request);
  r.submittedAt = unixNow();
  r.sequence = ++sequence_;
  persist(r);  // before it is acknowledged: accepted means on disk
  queues_[static_cast<int>(priority)].push_back(id);
  tasks_[id] = r;
  out = r;
  changed_.notify_all();
  return Submitted::accepted;
}

std::optional<Lease> TaskStore::take(std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (stopped_) return std::nullopt;
    const std::array<bool, 3> waiting = {!queues_[0].empty(), !queues_[1].empty(), !queues_[2].empty()};
    for (const Priority p : picker_.order()) {
      auto& queue = queues_[static_cast<int>(p)];
      if (queue.empty()) continue;
      picker_.taken(p, waiting);
      Lease lease;
      TaskRecord& r = tasks_.at(queue.front());
      queue.pop_front();
      r.state = TaskState::processing;
      r.startedAt = unixNow();
      persist(r);
      lease.task = r;
      cancelFlags_[r.id] = lease.cancel;
      return lease;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) return std::nullopt;
  }
}

void TaskStore::finish(const Lease& lease, TaskState state, nlohmann::json result) {
  std::lock_guard lock(mu_);
  const auto it = tasks_.find(lease.task.id);
  if (it == tasks_.end() || it->second.finished()) return;
  it->second.state = state;
  it->second.result = std::move(result);
  it->second.finishedAt = unixNow();
  cancelFlags_.erase(lease.task.id);
  persist(it->second);
  changed_.notify_all();
}

bool TaskStore::cancel(const std::string& id) {
  std::lock_guard lock(mu_);
  const auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.finished()) return false;
  if (it->second.state == TaskState::queued) {
    auto& q = queues_[static_cast<int>(it->second.priority)];
    q.erase(std::remove(q.begin(), q.end(), id), q.end());
    it->second.state = TaskState::cancelled;
    it->second.finishedAt = unixNow();
    it->second.result = failureResponse(id, "CANCELLED", "cancelled before it ran");
    persist(it->second);
  } else if (const auto flag = cancelFlags_.find(id); flag != cancelFlags_.end()) {
    flag->second->store(true);
  }
  changed_.notify_all();
  return true;
}

std::optional<TaskRecord> TaskStore::get(const std::string& id) {
  std::lock_guard lock(mu_);
  expire();
  const auto it = tasks_.find(id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

std::optional<TaskRecord> TaskStore::waitFinished(const std::string& id, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto it = tasks_.find(id);
    if (it == tasks_.end()) return std::nullopt;
    if (it->second.finished() || stopped_) return it->second;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) return tasks_.at(id);
  }
}

QueueCounts TaskStore::counts() const {
  std::lock_guard lock(mu_);
  std::array<std::size_t, 5> byState{};  // in TaskState's order
  for (const auto& [id, r] : tasks_) ++byState[static_cast<std::size_t>(r.state)];
  return {byState[0], byState[1], byState[2], byState[3], byState[4], 0};
}

void TaskStore::expire() {
  const double cutoff = unixNow() - static_cast<double>(options_.resultTtl.count());
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    if (it->second.finished() && it->second.finishedAt < cutoff) {
      std::error_code ec;
      fs::remove(fileOf(it->first), ec);
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
}

void TaskStore::stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  for (auto& [id, flag] : cancelFlags_) flag->store(true);
  changed_.notify_all();
}

bool TaskStore::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

}  // namespace cuset::service
