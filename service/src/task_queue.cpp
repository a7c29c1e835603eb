#include "cuset/service/task_queue.hpp"

#include <algorithm>
#include <cctype>

namespace cuset::service {

double unixNow() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::optional<Priority> parsePriority(std::string_view name) {
  if (name == "low") return Priority::low;
  if (name == "normal") return Priority::normal;
  if (name == "high") return Priority::high;
  return std::nullopt;
}

std::string_view priorityName(Priority p) {
  switch (p) {
    case Priority::low:
      return "low";
    case Priority::high:
      return "high";
    case Priority::normal:
      break;
  }
  return "normal";
}

std::string_view taskStateName(TaskState s) {
  switch (s) {
    case TaskState::queued:
      return "queued";
    case TaskState::processing:
      return "processing";
    case TaskState::completed:
      return "completed";
    case TaskState::failed:
      return "failed";
    case TaskState::cancelled:
      return "cancelled";
  }
  return "failed";
}

bool validTaskId(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; });
}

std::optional<TaskState> parseTaskState(std::string_view name) {
  for (TaskState t : {TaskState::queued, TaskState::processing, TaskState::completed, TaskState::failed, TaskState::cancelled}) {
    if (taskStateName(t) == name) return t;
  }
  return std::nullopt;
}

std::array<Priority, 3> PriorityPicker::order() const {
  // Priorities passed over too often first, the lowest of them first; then the rest, highest first.
  std::array<Priority, 3> order{};
  std::size_t n = 0;
  for (int p = 0; p < 3; ++p) {
    if (passedOver_[p] >= bound_) order[n++] = static_cast<Priority>(p);
  }
  for (int p = 2; p >= 0; --p) {
    if (passedOver_[p] < bound_) order[n++] = static_cast<Priority>(p);
  }
  return order;
}

void PriorityPicker::taken(Priority chosen, const std::array<bool, 3>& waiting) {
  const int c = static_cast<int>(chosen);
  for (int p = 0; p < 3; ++p) {
    if (p == c || !waiting[p]) {
      passedOver_[p] = 0;
    } else if (p < c) {
      ++passedOver_[p];
    }
  }
}

}  // namespace cuset::service
