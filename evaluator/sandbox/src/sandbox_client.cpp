// The supervisor's side of the sandbox: the pool of `cuset __worker` processes.
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/worker_process.hpp"
#include "cuset/evaluator/sandbox/process_roles.hpp"
#include "buffer_fences.hpp"

namespace cuset {

// One `cuset __worker` process.
class SandboxWorker {
 public:
  explicit SandboxWorker(const SandboxLimits& limits)
      : limits_(limits),
        process_({std::string(kSimWorkerRole.name), "--memory-bytes", std::to_string(limits.memoryBytes)}, limits.sharedPayload,
                 WorkerEnvironment::minimal) {}

  SimJobResult run(SimJob& job) {
    sandbox::Message request;
    request.header = {{"library", job.library.string()},
                      {"state_key", job.stateKey},
                      {"fibers", job.fibers},
                      {"reverse", job.reverseThreadOrder},
                      {"shared_poison", job.sharedPoison},
                      {"shared_accesses", job.sharedAccesses},
                      {"host_threads", limits_.hostThreads},
                      {"stack_bytes", limits_.stackBytes},
                      {"timeout_ms", limits_.timeout.count()},
                      {"slow_limit_ms", limits_.effectiveSlowLimit().count()},
                      {"launches", launchesToJson(job.launches, *job.layout)},
                      {"fences", detail::fencesToJson(*job.layout)},
                      {"tails", detail::tailsToJson(*job.layout)},
                      {"watched", job.sharedAccesses == 1 ? detail::watchedBuffersToJson(*job.layout) : nlohmann::json::array()},
                      {"race_across_blocks", job.raceAcrossBlocks}};
    request.payload = std::move(job.region);
    SimJobResult result;
    // The worker enforces the job's time limit itself; this outer limit only catches a stuck worker.
    auto reply = process_.call(request, std::chrono::steady_clock::now() + limits_.effectiveSlowLimit() + std::chrono::seconds(30));
    job.region = std::move(request.payload);  // the region's storage, for the reply's bytes
    if (!reply) {
      result.message = "sandbox " + reply.error();
      return result;
    }
    result.status = parseTrialStatus(reply->header.value("status", ""));
    result.message = reply->header.value("message", "");
    result.kernelMs = reply->header.value("kernel_ms", 0.0);
    reply->moveBytesTo(job.region);
    return result;
  }

 private:
  SandboxLimits limits_;
  WorkerProcess process_;
};

std::size_t defaultSandboxMemory(std::size_t workers) {
  const auto pages = static_cast<std::size_t>(::sysconf(_SC_PHYS_PAGES)), pageSize = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t share = pages * pageSize / 4 * 3 / std::max<std::size_t>(workers, 1);
  return std::clamp(share, std::size_t{1} << 30, std::size_t{16} << 30);
}

SandboxPool::SandboxPool(std::size_t workers, SandboxLimits limits) : limits_(limits) {
  if (limits_.memoryBytes == 0) limits_.memoryBytes = defaultSandboxMemory(workers);
  ::signal(SIGPIPE, SIG_IGN);  // a dying worker must not take the supervisor with it
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i) {
    workers_.push_back(std::make_unique<SandboxWorker>(limits_));
    idle_.push_back(workers_.back().get());
  }
}

SandboxPool::~SandboxPool() = default;

SandboxPool::Lease SandboxPool::acquire() {
  std::unique_lock lock(mutex_);
  available_.wait(lock, [this] { return !idle_.empty(); });
  SandboxWorker* worker = idle_.back();
  idle_.pop_back();
  return Lease(*this, worker);
}

void SandboxPool::release(SandboxWorker* worker) {
  std::lock_guard lock(mutex_);
  idle_.push_back(worker);
  available_.notify_one();
}

SandboxPool::Lease::~Lease() {
  if (worker_) pool_.release(worker_);
}

SimJobResult SandboxPool::Lease::run(SimJob& job) { return worker_->run(job); }

SimJobResult SandboxPool::run(SimJob& job) { return acquire().run(job); }

}  // namespace cuset
