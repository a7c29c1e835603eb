// `cuset serve` and `cuset worker`: the evaluator as an HTTP service for RL trainers, on one machine or
// as a fleet sharing a Redis queue (docs/serve.md).
#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "cuset/service/serve.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/resources.hpp"

namespace cuset::cli {
namespace {

// What judging a task needs, the same for the server's own workers and a fleet's.
struct RunnerFlags {
  std::string state = "serve-state";
  std::string referenceCache = (defaultCacheDir() / "references").string();
  double reclaimAfterSeconds = 60;
  bool perTaskProcesses = false;
};

void addRunnerOptions(CLI::App* cmd, service::RunnerOptions& runner, RunnerFlags& flags) {
  cmd->add_option("--backend", runner.backend,
                  "What a request's backend \"cuda\" (KernelGYM's default) runs on: sim, cuda or auto; for a worker, also which tasks it takes")
      ->capture_default_str()
      ->check(CLI::IsMember({"sim", "cuda", "auto"}));
  cmd->add_option("--problems", runner.problemsDir, "A suite whose problem ids (level1/kb19_relu) a request's reference_code may name")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--devices", runner.devices, "cuda: GPU ordinals the workers share, worker i on the i-th (round robin); default: every visible GPU")
      ->delimiter(',');
  cmd->add_option("--state", flags.state, "Folder of the tasks' work (and the embedded queue)")->capture_default_str();
  cmd->add_option("--reference-cache", flags.referenceCache,
                  "Folder of imported references, shared by every server and worker of this machine that names it (one imports each)")
      ->capture_default_str();
  cmd->add_option("--reclaim-after", flags.reclaimAfterSeconds, "Redis queue: a task whose worker is silent this many seconds runs on another")
      ->capture_default_str()
      ->check(CLI::Range(3.0, 86400.0));
  cmd->add_flag("--per-task-processes", flags.perTaskProcesses,
                "Judge each task in a `cuset eval` process of its own instead of a warm `cuset engine` per worker (for measuring the difference)");
  cmd->add_option("--engine-max-runs", runner.engineMaxRuns, "A warm engine is replaced after this many tasks")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--engine-max-mib", runner.engineMaxMiB, "A warm engine is replaced once it holds this many MiB resident")
      ->capture_default_str()
      ->check(CLI::Range(64, 1 << 20));
}

void finishRunnerOptions(service::RunnerOptions& runner, const RunnerFlags& flags) {
  runner.stateDir = std::filesystem::absolute(flags.state);
  runner.referenceDir = std::filesystem::absolute(flags.referenceCache);
  runner.cuset = executablePath();
  runner.warmEngines = !flags.perTaskProcesses;
}

}  // namespace

void registerServeCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<service::ServeOptions>();
  auto flags = std::make_shared<RunnerFlags>();
  auto ttlHours = std::make_shared<double>(24.0);
  auto maxBodyMib = std::make_shared<double>(8.0);
  auto maxCodeMib = std::make_shared<double>(1.0);
  CLI::App* cmd = app.add_subcommand("serve", "Serve the evaluator over HTTP: KernelGYM's API and a native /v1 API, for RL trainers");
  cmd->add_option("--host", o->host, "Address to listen on (beyond loopback a --token-file is required)")->capture_default_str();
  cmd->add_option("--port", o->port, "Port (0: any free port, printed)")->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "Tasks judged at once by this server (0: none, with --queue redis:// and workers elsewhere)")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  cmd->add_option("--queue", o->queueUrl, "redis://[:password@]host[:port][/db]: a fleet's queue, served by `cuset worker` (default: embedded)");
  addRunnerOptions(cmd, o->runner, *flags);
  cmd->add_option("--token-file", o->tokenFile, "Bearer tokens, one per line")->check(CLI::ExistingFile);
  cmd->add_option("--max-queued", o->store.maxQueued, "Tasks waiting at most; past it 429 with Retry-After")->capture_default_str();
  cmd->add_option("--result-ttl-hours", *ttlHours, "Finished tasks are forgotten after this")->capture_default_str();
  cmd->add_option("--max-body-mib", *maxBodyMib, "Largest request body (413 past it)")->capture_default_str();
  cmd->add_option("--max-code-mib", *maxCodeMib, "Largest kernel_code or reference_code (413 past it)")->capture_default_str();
  cmd->add_option("--rate", o->ratePerToken, "Requests per second per token (or client address); 0: no limit")->capture_default_str();
  cmd->callback([=, &context] {
    finishRunnerOptions(o->runner, *flags);
    o->reclaimAfter = std::chrono::seconds(static_cast<long long>(flags->reclaimAfterSeconds));
    o->store.resultTtl = std::chrono::seconds(static_cast<long long>(*ttlHours * 3600));
    o->maxBodyBytes = static_cast<std::size_t>(*maxBodyMib * (1 << 20));
    o->limits.maxCodeBytes = static_cast<std::size_t>(*maxCodeMib * (1 << 20));
    service::serve(*o);
    context.exitCode = 0;
  });
}

void registerWorkerCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<service::WorkerOptions>();
  auto flags = std::make_shared<RunnerFlags>();
  flags->state = "worker-state";
  CLI::App* cmd = app.add_subcommand("worker", "Judge the tasks of a fleet's queue (cuset serve --queue redis://...) on this machine");
  cmd->add_option("--queue", o->queueUrl, "redis://[:password@]host[:port][/db], as given to cuset serve")->required();
  cmd->add_option("--jobs", o->jobs, "Tasks judged at once")->capture_default_str()->check(CLI::Range(1, 256));
  addRunnerOptions(cmd, o->runner, *flags);
  cmd->callback([=, &context] {
    finishRunnerOptions(o->runner, *flags);
    o->reclaimAfter = std::chrono::seconds(static_cast<long long>(flags->reclaimAfterSeconds));
    service::runWorker(*o);
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
