// `cuset worker` (docs/serve.md "A fleet"): workers of a fleet's Redis queue on this machine.
#include <fmt/format.h>

#include <iostream>

#include "cuset/service/redis_queue.hpp"
#include "cuset/service/serve.hpp"
#include "cuset/service/worker_pool.hpp"

namespace cuset::service {

void runWorker(WorkerOptions options) {
  blockStopSignals();
  RedisQueueOptions q;
  q.url = options.queueUrl;
  q.workerBackend = options.runner.backend;
  q.workers = options.jobs;
  q.reclaimAfter = options.reclaimAfter;
  RedisTaskQueue queue(q);
  TaskRunner runner(options.runner);
  {
    WorkerPool workers(queue, runner, options.jobs);
    std::cout << fmt::format("cuset worker: {} worker(s), backend {}, queue {}, state {}", options.jobs, options.runner.backend, queue.describe(),
                             options.runner.stateDir.string())
              << std::endl;
    waitForStopSignal();
    std::cerr << "cuset worker: stopping (tasks in progress go back to the queue)" << std::endl;
  }
}

}  // namespace cuset::service
