// `cuset serve`: the evaluator as an HTTP service for RL trainers (docs/serve.md).
#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "cuset/service/serve.hpp"

namespace cuset::cli {

void registerServeCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<service::ServeOptions>();
  auto state = std::make_shared<std::string>("serve-state");
  auto ttlHours = std::make_shared<double>(24.0);
  auto maxBodyMib = std::make_shared<double>(8.0);
  auto maxCodeMib = std::make_shared<double>(1.0);
  CLI::App* cmd = app.add_subcommand("serve", "Serve the evaluator over HTTP: KernelGYM's API and a native /v1 API, for RL trainers");
  cmd->add_option("--host", o->host, "Address to listen on (beyond loopback a --token-file is required)")->capture_default_str();
  cmd->add_option("--port", o->port, "Port (0: any free port, printed)")->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "Tasks judged at once")->capture_default_str()->check(CLI::Range(1, 256));
  cmd->add_option("--backend", o->runner.backend, "What a request's backend \"cuda\" (KernelGYM's default) runs on: sim, cuda or auto")
      ->capture_default_str()
      ->check(CLI::IsMember({"sim", "cuda", "auto"}));
  cmd->add_option("--problems", o->runner.problemsDir, "A suite whose problem ids (level1/kb19_relu) a request's reference_code may name")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--state", *state, "Folder of the queue, imported references and work (survives a restart)")->capture_default_str();
  cmd->add_option("--token-file", o->tokenFile, "Bearer tokens, one per line")->check(CLI::ExistingFile);
  cmd->add_option("--max-queued", o->store.maxQueued, "Tasks waiting at most; past it 429 with Retry-After")->capture_default_str();
  cmd->add_option("--result-ttl-hours", *ttlHours, "Finished tasks are forgotten after this")->capture_default_str();
  cmd->add_option("--max-body-mib", *maxBodyMib, "Largest request body (413 past it)")->capture_default_str();
  cmd->add_option("--max-code-mib", *maxCodeMib, "Largest kernel_code or reference_code (413 past it)")->capture_default_str();
  cmd->add_option("--rate", o->ratePerToken, "Requests per second per token (or client address); 0: no limit")->capture_default_str();
  cmd->callback([=, &context] {
    o->runner.stateDir = std::filesystem::absolute(*state);
    o->runner.cuset = std::filesystem::read_symlink("/proc/self/exe");
    o->store.resultTtl = std::chrono::seconds(static_cast<long long>(*ttlHours * 3600));
    o->maxBodyBytes = static_cast<std::size_t>(*maxBodyMib * (1 << 20));
    o->limits.maxCodeBytes = static_cast<std::size_t>(*maxCodeMib * (1 << 20));
    service::serve(*o);
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
