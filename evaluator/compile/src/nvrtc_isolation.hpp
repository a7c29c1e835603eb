#pragma once
// The supervisor's side of `cuset __nvrtc-worker`: a pool of helper processes, grown on demand (one
// per concurrent compile), each killed and replaced when a compile runs past its time limit or the
// helper dies. Thread-safe. Private to the compile stage.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"
#include "nvrtc_raw.hpp"

namespace cuset {
class WorkerProcess;
}

namespace cuset::detail {

class NvrtcHelperPool {
 public:
  explicit NvrtcHelperPool(std::chrono::milliseconds timeout);
  ~NvrtcHelperPool();
  NvrtcHelperPool(const NvrtcHelperPool&) = delete;
  NvrtcHelperPool& operator=(const NvrtcHelperPool&) = delete;

  // runNvrtc() in a helper. The error says why there is no result: the time limit, or a helper that
  // died (it ran out of memory, say) or could not start.
  Expected<RawCompile> compile(std::string_view source, const std::vector<std::string>& options, const std::vector<std::string>& names, bool cubin);
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkerProcess>> idle_;
};

}  // namespace cuset::detail
