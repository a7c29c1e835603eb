// `cuset launch --nproc N [--nnodes M --node-rank R --master-addr A --master-port P] -- SUBCOMMAND...`
#include <cstdlib>

#include "commands.hpp"
#include "cuset/loop/local_launch.hpp"

namespace cuset::cli {

void registerLaunchCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<LaunchOptions>();
  CLI::App* cmd = app.add_subcommand("launch", "Start N local processes of a subcommand with torchrun's environment (docs/scale-out.md)");
  cmd->add_option("--nproc", o->nproc, "Processes on this node")->capture_default_str();
  cmd->add_option("--nnodes", o->nnodes, "Nodes in the job")->capture_default_str();
  cmd->add_option("--node-rank", o->nodeRank, "This node's rank")->capture_default_str();
  cmd->add_option("--master-addr", o->masterAddr, "Rank 0's host")->capture_default_str();
  cmd->add_option("--master-port", o->masterPort, "Rank 0's port")->capture_default_str();
  cmd->add_option("command", o->command, "The cuset subcommand and its arguments, after --")->required();
  cmd->callback([o, &context] {
    // Another binary in place of this one: for tests and wrappers.
    if (const char* b = std::getenv("CUSET_LAUNCH_BINARY"); b && *b) o->binary = b;
    context.exitCode = launchLocal(*o);
  });
}

}  // namespace cuset::cli
