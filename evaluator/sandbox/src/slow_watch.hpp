#pragma once
// How the worker keeps a job's time limit. A kernel the simulator runs slowly but that is still
// finishing blocks at the limit is given more time, up to the slow limit; if it reaches that it is too
// slow to simulate (`unsupported`: the simulator's limit, not the model's fault). A kernel that finished
// no block lately (in the last half limit, or two of its own block times when its blocks are longer)
// is hung, a spin or a deadlock: `timeout`, as before.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace cuset::detail {

class SlowWatch {
 public:
  enum class Outcome { exited, timeout, tooSlow };
  using Clock = std::chrono::steady_clock;

  // `job`: its "launches" (grids, for the block count), "host_threads" and "slow_limit_ms" (absent: the limit itself).
  SlowWatch(const nlohmann::json& job, std::chrono::milliseconds limit);

  // Waits for `child` (reaped into `wstatus`), killing it when hung or past the slow limit.
  // `blocksDone` is the child's count of finished blocks (shared memory, written concurrently).
  Outcome wait(pid_t child, std::uint64_t& blocksDone, int& wstatus);

  // "too slow to simulate at these sizes: 37 of 128 blocks after 80.0 s; judge it with --backend cuda"
  std::string tooSlowMessage(std::uint64_t blocksDone) const;

 private:
  std::chrono::milliseconds limit_, slowLimit_;
  std::int64_t hostThreads_ = 1;  // blocks run this many at a time
  std::uint64_t totalBlocks_ = 0;
  Clock::duration ran_{};
};

}  // namespace cuset::detail
