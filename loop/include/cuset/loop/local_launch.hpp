#pragma once
// `cuset launch --nproc N [--nnodes M --node-rank R --master-addr A --master-port P] -- SUBCOMMAND...`:
// N local processes of a cuset subcommand with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT). SIGINT and SIGTERM are passed on to every
// process; the first process to fail ends the others (SIGTERM, then SIGKILL after a grace period)
// and its status is the launch's.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cuset {

struct LaunchOptions {
  int nproc = 1;
  int nnodes = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  std::vector<std::string> command;  // arguments after the binary
  std::filesystem::path binary;      // default: this cuset
  std::chrono::milliseconds grace{10000};
};

// The exit status to end with: 0 when every process succeeded, else the first failure's (a signal
// as 128 + its number).
int launchLocal(const LaunchOptions& options);

}  // namespace cuset
