// Launches: host threads take the blocks of a grid one at a time and run each with a BlockRunner
// (block_runner.cpp); the kernel-facing entry points that are not collectives.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "block_runner.hpp"
#include "global_accesses.hpp"
#include "cuset_sim/runtime.hpp"

namespace cuset_sim {

thread_local ThreadContext* tls_thread = nullptr;

namespace {

using detail::BlockRunner;
using detail::format;
using detail::SimTrap;
using detail::StaticShared;

// Host threads that run blocks of the current launch.
class HostThreads {
 public:
  // Returns once every thread is running: glibc's thread start-up makes system calls (rseq,
  // set_robust_list) that the sandbox's seccomp filter, installed right after, would forbid.
  explicit HostThreads(int count) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { loop(); });
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return started_ == threads_.size(); });
  }
  ~HostThreads() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  LaunchOutcome run(const LaunchSpec& spec, const LaunchOptions& options, const StaticShared& statics) {
    std::unique_lock lock(mutex_);
    spec_ = &spec;
    options_ = &options;
    statics_ = &statics;
    nextBlock_ = 0;
    failed_ = false;
    firstError_.clear();
    busy_ = threads_.size();
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [this] { return busy_ == 0; });
    return LaunchOutcome{!failed_, firstError_};
  }

  static bool runBlocks(const LaunchSpec& spec, const LaunchOptions& options, const StaticShared& statics, std::atomic<std::uint64_t>& next,
                        std::atomic<bool>& failed, BlockRunner& runner, std::string& error) {
    const std::uint64_t total = std::uint64_t{spec.grid[0]} * spec.grid[1] * spec.grid[2];
    for (std::uint64_t b = next++; b < total && !failed; b = next++) {
      const uint3 idx{static_cast<unsigned>(b % spec.grid[0]), static_cast<unsigned>((b / spec.grid[0]) % spec.grid[1]),
                      static_cast<unsigned>(b / (std::uint64_t{spec.grid[0]} * spec.grid[1]))};
      if (!runner.run(spec, options, statics, idx)) {
        error = runner.error();
        failed = true;
        return false;
      }
      if (options.blocksDone) std::atomic_ref(*options.blocksDone).fetch_add(1, std::memory_order_relaxed);
    }
    return true;
  }

 private:
  void loop() {
    BlockRunner runner;
    std::uint64_t seen = 0;
    {
      std::lock_guard lock(mutex_);
      ++started_;
    }
    done_.notify_all();
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      std::string error;
      if (!runBlocks(*spec_, *options_, *statics_, nextBlock_, failed_, runner, error)) {
        std::lock_guard lock(mutex_);
        if (firstError_.empty()) firstError_ = error;
      }
      std::lock_guard lock(mutex_);
      if (--busy_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool stopping_ = false;
  std::uint64_t generation_ = 0;
  std::size_t busy_ = 0;
  std::size_t started_ = 0;
  const LaunchSpec* spec_ = nullptr;
  const LaunchOptions* options_ = nullptr;
  const StaticShared* statics_ = nullptr;
  std::atomic<std::uint64_t> nextBlock_{0};
  std::atomic<bool> failed_{false};
  std::string firstError_;
};

std::unique_ptr<HostThreads>& hostThreads() {
  static std::unique_ptr<HostThreads> pool;
  return pool;
}

}  // namespace

void* dynamic_shared() { return tls_thread ? tls_thread->block->dynamicShared : nullptr; }

void trap(const char* what, int line) { throw SimTrap{line >= 0 ? format("%s (line %d)", what, line) : std::string(what)}; }

void start_host_threads(int threads) { hostThreads() = std::make_unique<HostThreads>(std::max(1, threads)); }

LaunchOutcome run_launch(const LaunchSpec& spec, const LaunchOptions& options) {
  LaunchOutcome outcome;
  const StaticShared statics = options.sharedPoison >= 0 ? StaticShared::of(*spec.kernel) : StaticShared{};
  // A race check keeps one set of records for global memory: its launches run on this thread alone.
  const bool raceCheck = options.sharedAccesses == SharedAccesses::raceCheck && detail::globalAccesses().watching();
  if (raceCheck) detail::globalAccesses().start(spec, options);
  if (hostThreads() && !raceCheck) {
    outcome = hostThreads()->run(spec, options, statics);
  } else {
    thread_local BlockRunner runner;
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::string error;
    HostThreads::runBlocks(spec, options, statics, next, failed, runner, error);
    outcome = LaunchOutcome{!failed, error};
  }
  if (raceCheck && outcome.ok) {
    if (std::string race = detail::globalAccesses().finish(); !race.empty()) outcome = LaunchOutcome{false, std::move(race)};
  }
  if (!outcome.ok) outcome.error = std::string("kernel ") + spec.kernel->name + ": " + outcome.error;
  return outcome;
}

}  // namespace cuset_sim
