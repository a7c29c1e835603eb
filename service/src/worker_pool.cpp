#include "cuset/service/worker_pool.hpp"

#include <signal.h>

#include <iostream>

#include "cuset/service/kernelgym_api.hpp"

namespace cuset::service {

WorkerPool::WorkerPool(TaskQueue& queue, TaskRunner& runner, std::size_t workers) : queue_(queue), runner_(runner) {
  for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this, i] { work(i); });
}

WorkerPool::~WorkerPool() {
  queue_.stop();
  for (auto& t : threads_) t.join();
}

void WorkerPool::work(std::size_t index) {
  while (!queue_.stopped()) {
    std::optional<Lease> lease;
    try {
      lease = queue_.take(std::chrono::milliseconds(500));
    } catch (const std::exception& e) {  // a queue that answers nonsense: say so, keep serving
      std::cerr << "cuset: taking a task: " << e.what() << std::endl;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (!lease) continue;
    std::pair<TaskState, nlohmann::json> outcome;
    try {
      outcome = runner_.run(lease->task, *lease->cancel, index);
    } catch (const std::exception& e) {  // the server's own failure (a file it cannot write): this task's, not the server's end
      outcome = {TaskState::failed, failureResponse(lease->task.id, "INTERNAL_ERROR", e.what())};
    }
    if (queue_.stopped()) return;  // stopping, not cancelled: the task runs again (next start, or another worker)
    try {
      queue_.finish(*lease, outcome.first, std::move(outcome.second));
    } catch (const std::exception& e) {
      std::cerr << "cuset: finishing task '" << lease->task.id << "': " << e.what() << std::endl;
    }
  }
}

namespace {
sigset_t stopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void blockStopSignals() {
  const sigset_t set = stopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void waitForStopSignal() {
  const sigset_t set = stopSignals();
  int signal = 0;
  sigwait(&set, &signal);
}

}  // namespace cuset::service
