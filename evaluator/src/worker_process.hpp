#pragma once
// One helper process of the supervisor (`cuset __worker`, `cuset __cuda-worker`): spawned on first
// use, spoken to over pipes with sandbox::Message frames, killed and replaced when it dies or stops
// answering. Not thread-safe: a pool hands each to one thread at a time.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/sandbox_protocol.hpp"

namespace cuset {

class WorkerProcess {
 public:
  // `arguments` follow the executable ($CUSET_WORKER or this process's own binary).
  explicit WorkerProcess(std::vector<std::string> arguments) : arguments_(std::move(arguments)) {}
  ~WorkerProcess() { stop(); }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `request` and waits for the reply until `deadline`. A worker that is gone or silent is
  // stopped (the next call starts a new one) and the error says what happened to it.
  Expected<sandbox::Message> call(const sandbox::Message& request, std::chrono::steady_clock::time_point deadline);
  void stop();

 private:
  void start();
  std::string describeExit();

  std::vector<std::string> arguments_;
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

}  // namespace cuset
