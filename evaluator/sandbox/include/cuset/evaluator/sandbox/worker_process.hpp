#pragma once
// One helper process of the supervisor (`cuset __worker`, `cuset __cuda-worker`): spawned on first
// use, spoken to over pipes with sandbox::Message frames, killed and replaced when it dies or stops
// answering. Payload bytes travel through a SharedPayload the worker inherits as descriptor
// kWorkerPayloadFd (told by `--payload-fd`), or through the pipe where memfd is unavailable.
// Not thread-safe: a pool hands each to one thread at a time.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/shared_payload.hpp"

namespace cuset {

inline constexpr int kWorkerPayloadFd = 3;

// What of the supervisor's environment a helper process starts with. A worker whose children run
// candidate code as host code (the sim backend) gets `minimal`: only CUSET_LOG and the sanitizers'
// options, so no secret of the supervisor (an API key, a token) is anywhere in its memory. The GPU
// worker keeps the whole environment: the driver reads its own variables, and no candidate code runs
// on its host side.
enum class WorkerEnvironment { inherit, minimal };

// The environment a worker starts with: all of `environment` (inherit), or only the logging and
// sanitizer settings and the library path the executable needs to load (minimal).
std::vector<std::string> workerEnvironment(char* const* environment, WorkerEnvironment mode);

class WorkerProcess {
 public:
  // `arguments` follow the executable ($CUSET_WORKER or this process's own binary).
  // `sharedPayload` false: payloads through the pipe (the fallback; benchmarks compare the two).
  explicit WorkerProcess(std::vector<std::string> arguments, bool sharedPayload = true, WorkerEnvironment environment = WorkerEnvironment::inherit);
  ~WorkerProcess() { stop(); }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `request` and waits for the reply until `deadline`. A worker that is gone or silent is
  // stopped (the next call starts a new one) and the error says what happened to it; so is one whose
  // reply says `"worker_exits": true`. A reply's shared bytes are valid until the next call.
  Expected<sandbox::Message> call(const sandbox::Message& request, std::chrono::steady_clock::time_point deadline);
  void stop();

 private:
  void start();
  std::string describeExit();

  std::vector<std::string> arguments_;
  WorkerEnvironment environment_;
  std::optional<sandbox::SharedPayload> shared_;
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

}  // namespace cuset
