#pragma once
// `cuset serve` (docs/serve.md): the evaluator as an HTTP service for reinforcement-learning trainers,
// with KernelGYM's API (drop-in) and a native asynchronous one (/v1), workers of its own on an embedded
// queue that survives a restart.
#include <filesystem>
#include <string>

#include "cuset/service/kernelgym_api.hpp"
#include "cuset/service/task_runner.hpp"
#include "cuset/service/task_store.hpp"

namespace cuset::service {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                      // KernelGYM's; 0: any free port (printed)
  std::size_t jobs = 1;                 // tasks judged at once
  std::filesystem::path tokenFile;      // one bearer token per line; required beyond loopback
  std::size_t maxBodyBytes = 8u << 20;  // a body over this is refused with 413
  double ratePerToken = 50.0;           // requests per second per token (or per client address), burst 2x
  ServeLimits limits;
  TaskStoreOptions store;  // .dir defaults to <state>/tasks
  RunnerOptions runner;    // .stateDir is the server's state folder
};

// Runs until SIGINT or SIGTERM; work in progress at that moment is queued again at the next start.
// Throws cuset::Error for a configuration it refuses (no token beyond loopback, an unreadable token file).
void serve(ServeOptions options);

bool isLoopback(const std::string& host);

}  // namespace cuset::service
