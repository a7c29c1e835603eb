#pragma once
// The workers of `cuset serve` and `cuset worker`: threads that take a task from a queue, judge it with
// the runner, and finish it. The same loop for the embedded queue and for a fleet's Redis.
#include <thread>
#include <vector>

#include "cuset/service/task_queue.hpp"
#include "cuset/service/task_runner.hpp"

namespace cuset::service {

class WorkerPool {
 public:
  WorkerPool(TaskQueue& queue, TaskRunner& runner, std::size_t workers);
  // Stops the queue (work in progress runs again: at the next start, or on another worker) and joins.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

 private:
  void work(std::size_t index);
  TaskQueue& queue_;
  TaskRunner& runner_;
  std::vector<std::thread> threads_;
};

// SIGINT and SIGTERM: blocked in the calling thread (call it before any thread starts, which inherit
// the mask), then waited for by waitForStopSignal.
void blockStopSignals();
void waitForStopSignal();

}  // namespace cuset::service
