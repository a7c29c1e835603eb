#pragma once
// Sandboxed execution of candidate kernels (DESIGN §4 "Sandbox").
//
//   supervisor (cuset eval) ──pipes──► worker (cuset __worker: rlimits, no candidate code)
//        └──── region in a shared memory file (SharedPayload) ────┘
//                                          └─ fork per job ─► child: dlopen the candidate library,
//                                             start host threads, install the seccomp allow-list,
//                                             run the launches on the shared device region, _exit
//
// The child shares only the device region (inputs, outputs, workspace, guard bands) and a status page
// with the worker; it holds no pipe, no reference output and no verdict. The supervisor checks the
// returned region itself. A crash, a forbidden system call or a hang ends only the child; a worker
// that dies or stops answering is replaced.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/region/device_region.hpp"
#include "cuset/evaluator/region/trial_run.hpp"

namespace cuset {

struct SandboxLimits {
  std::chrono::milliseconds timeout{10000};  // wall time of one job (all launches of one trial)
  // A job still finishing blocks at `timeout` runs on up to this, then is too slow to simulate
  // (`unsupported`) rather than hung (`timeout`); 0: 4 x timeout (effectiveSlowLimit()).
  std::chrono::milliseconds slowLimit{0};
  std::size_t memoryBytes = 0;          // RLIMIT_AS of the worker and its children; 0: defaultSandboxMemory()
  int hostThreads = 1;                  // simulator host threads per job
  std::size_t stackBytes = 256 * 1024;  // per simulated CUDA thread (fiber)
  bool sharedPayload = true;            // regions through a shared memory file, not the pipe

  std::chrono::milliseconds effectiveSlowLimit() const { return slowLimit.count() > 0 ? slowLimit : 4 * timeout; }
};

struct SimJob {
  std::filesystem::path library;
  // The candidate this trial belongs to: a worker keeps the library's globals between jobs of one key,
  // as a GPU keeps a module loaded for a candidate (empty: every job starts from the library's data).
  std::string stateKey;
  bool fibers = true;
  bool reverseThreadOrder = false;
  int sharedPoison = 0x7F;  // cuset_sim::LaunchOptions::sharedPoison
  // cuset_sim::SharedAccesses as an int: 0 unchecked, 1 race check, 2 lockstep (a library built with
  // SimBuildChecks::sharedAccesses; lockstep runs with fibers).
  int sharedAccesses = 0;
  // A race check also compares global accesses of different blocks (false: the kernel orders its
  // blocks itself, cuset_sim::LaunchOptions::raceAcrossBlocks).
  bool raceAcrossBlocks = true;
  std::vector<KernelStep> launches;  // a run of the plan's kernel steps (library steps run between jobs)
  const RegionLayout* layout = nullptr;
  std::vector<std::byte> region;  // in: filled region; out: as the kernel left it
};

// kernelMs: CPU time of the launches, as the child measured it.
using SimJobResult = TrialRun;

// The address-space limit of each of `workers` sandbox workers when none is given: three quarters of
// the machine's memory shared among them, at most 16 GiB and at least 1 GiB each. (16 GiB each, the
// old default, let two jobs of a kernel that touches 10 GB take more than this 24 GiB machine has.)
std::size_t defaultSandboxMemory(std::size_t workers);

class SandboxWorker;

// A fixed set of workers shared by the evaluation threads. Thread-safe.
class SandboxPool {
 public:
  SandboxPool(std::size_t workers, SandboxLimits limits);
  ~SandboxPool();
  SandboxPool(const SandboxPool&) = delete;
  SandboxPool& operator=(const SandboxPool&) = delete;

  // Runs one job on a free worker; `job.region` comes back as the kernel left it.
  SimJobResult run(SimJob& job);

  // One worker held for several jobs (all trials of a candidate, so its state stays in one place).
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), worker_(std::exchange(other.worker_, nullptr)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    SimJobResult run(SimJob& job);

   private:
    friend class SandboxPool;
    Lease(SandboxPool& pool, SandboxWorker* worker) : pool_(pool), worker_(worker) {}
    SandboxPool& pool_;
    SandboxWorker* worker_;
  };
  Lease acquire();  // waits for a free worker
  const SandboxLimits& limits() const { return limits_; }

 private:
  SandboxLimits limits_;
  void release(SandboxWorker* worker);
  std::vector<std::unique_ptr<SandboxWorker>> workers_;
  std::vector<SandboxWorker*> idle_;
  std::mutex mutex_;
  std::condition_variable available_;
};

// How far the sandboxed child's view of the file system is narrowed here, for run records.
std::string sandboxFileSystemIsolation();

// The body of `cuset __worker`: serves jobs on stdin/stdout until EOF, with regions in the shared
// payload at `payloadFd` when given. Returns the exit status.
int runSandboxWorker(std::size_t memoryBytes, std::optional<int> payloadFd);

}  // namespace cuset
