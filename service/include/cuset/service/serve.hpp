#pragma once
// `cuset serve` (docs/serve.md): the evaluator as an HTTP service for reinforcement-learning trainers,
// with KernelGYM's API (drop-in) and a native asynchronous one (/v1), workers of its own on an embedded
// queue that survives a restart, or a fleet's queue in Redis served by `cuset worker` processes.
#include <chrono>
#include <filesystem>
#include <string>

#include "cuset/service/kernelgym_api.hpp"
#include "cuset/service/task_runner.hpp"
#include "cuset/service/task_store.hpp"

namespace cuset::service {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                        // KernelGYM's; 0: any free port (printed)
  std::size_t jobs = 1;                   // tasks judged at once by this process (0: only with a Redis queue)
  std::string queueUrl;                   // redis://...: a fleet's queue (redis_queue.hpp); empty: the embedded one
  std::chrono::seconds reclaimAfter{60};  // Redis: a task whose worker is silent this long runs elsewhere
  std::filesystem::path tokenFile;        // one bearer token per line; required beyond loopback
  std::size_t maxBodyBytes = 8u << 20;    // a body over this is refused with 413
  double ratePerToken = 50.0;             // requests per second per token (or per client address), burst 2x
  ServeLimits limits;
  TaskStoreOptions store;  // .dir defaults to <state>/tasks
  RunnerOptions runner;    // .stateDir is the server's state folder
};

// Runs until SIGINT or SIGTERM; work in progress at that moment is queued again at the next start.
// Throws cuset::Error for a configuration it refuses (no token beyond loopback, an unreadable token file).
void serve(ServeOptions options);

bool isLoopback(const std::string& host);

}  // namespace cuset::service

namespace cuset::service {

struct WorkerOptions {
  std::string queueUrl;  // redis://...
  std::size_t jobs = 1;
  std::chrono::seconds reclaimAfter{60};
  RunnerOptions runner;  // .backend: sim, cuda or auto, which decides the tasks this worker takes
};

// `cuset worker`: judges tasks of a fleet's queue until SIGINT or SIGTERM, which hand the tasks in
// progress back to the queue for another worker.
void runWorker(WorkerOptions options);

}  // namespace cuset::service
