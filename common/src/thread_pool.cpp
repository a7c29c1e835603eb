#include "cuset/common/thread_pool.hpp"

#include <algorithm>
#include <exception>

namespace cuset {

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  workers_.clear();  // jthread joins
}

void ThreadPool::enqueue(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push(std::move(job));
  }
  wake_.notify_one();
}

void ThreadPool::workerLoop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop();
    }
    job();  // packaged_task stores exceptions in the future
  }
}

void parallelChunks(std::size_t n, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& body) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::max<std::size_t>(1, std::min(threads, n));
  if (threads == 1) {
    if (n > 0) body(0, n);
    return;
  }
  const std::size_t chunk = (n + threads - 1) / threads;
  std::vector<std::future<void>> others;
  for (std::size_t begin = chunk; begin < n; begin += chunk) {
    others.push_back(std::async(std::launch::async, body, begin, std::min(n, begin + chunk)));
  }
  std::exception_ptr first;
  try {
    body(0, std::min(n, chunk));
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace cuset
