#pragma once
// A fixed-size pool of worker threads draining one FIFO queue. Destruction waits for queued work.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace cuset {

class ThreadPool {
 public:
  // threads == 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(std::size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const { return workers_.size(); }

  // Runs `task` on a worker; the future carries its result or its exception.
  template <class F>
  auto submit(F task) -> std::future<decltype(task())> {
    using R = decltype(task());
    auto packaged = std::make_shared<std::packaged_task<R()>>(std::move(task));
    std::future<R> result = packaged->get_future();
    enqueue([packaged] { (*packaged)(); });
    return result;
  }

 private:
  void enqueue(std::function<void()> job);
  void workerLoop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::queue<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;
};

// Runs body(begin, end) over [0, n) split into at most `threads` contiguous chunks (0: one per core),
// on threads of its own, and returns when all are done; rethrows the first exception. One chunk runs
// on the calling thread.
void parallelChunks(std::size_t n, std::size_t threads, const std::function<void(std::size_t begin, std::size_t end)>& body);

}  // namespace cuset
