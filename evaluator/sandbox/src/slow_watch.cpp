#include "slow_watch.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>

namespace cuset::detail {

SlowWatch::SlowWatch(const nlohmann::json& job, std::chrono::milliseconds limit)
    : limit_(limit),
      slowLimit_(std::max(limit, std::chrono::milliseconds(job.value("slow_limit_ms", limit.count())))),
      hostThreads_(std::max<std::int64_t>(1, job.value("host_threads", 1))) {
  for (const auto& launch : job.value("launches", nlohmann::json::array())) {
    std::uint64_t blocks = 1;
    for (const auto& d : launch.at("grid")) blocks *= d.get<std::uint64_t>();
    totalBlocks_ += blocks;
  }
}

SlowWatch::Outcome SlowWatch::wait(pid_t child, std::uint64_t& blocksDone, int& wstatus) {
  const auto start = Clock::now();
  const auto cap = start + slowLimit_;
  auto deadline = start + limit_;
  std::uint64_t seen = 0;
  std::optional<Clock::time_point> lastProgress;
  // A kernel in progress finishes a block at least every half limit, or every two of its own block
  // times (host threads x the time per finished block) when its blocks are longer than that.
  auto window = [&] {
    const auto perBlock = seen == 0 ? Clock::duration{} : (*lastProgress - start) * hostThreads_ / static_cast<std::int64_t>(seen);
    return std::max<Clock::duration>(limit_ / 2, 2 * perBlock);
  };
  for (;;) {
    if (::waitpid(child, &wstatus, WNOHANG) == child) return Outcome::exited;
    const auto now = Clock::now();
    // The count is the candidate's to write too: forging it can only turn its timeout into
    // `unsupported`, never into a pass.
    const std::uint64_t done = std::atomic_ref(blocksDone).load(std::memory_order_relaxed);
    if (done != seen) {
      seen = done;
      lastProgress = now;
    }
    if (now >= deadline) {
      const bool progressing = lastProgress && now - *lastProgress <= window();
      if (!progressing || now >= cap) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &wstatus, 0);
        ran_ = now - start;
        return progressing ? Outcome::tooSlow : Outcome::timeout;
      }
      deadline = std::min(now + window(), cap);
    }
    ::usleep(500);
  }
}

std::string SlowWatch::tooSlowMessage(std::uint64_t blocksDone) const {
  return fmt::format("too slow to simulate at these sizes: {} of {} blocks after {:.1f} s; judge it with --backend cuda",
                     std::min(blocksDone, totalBlocks_), totalBlocks_, std::chrono::duration<double>(ran_).count());
}

}  // namespace cuset::detail
