#pragma once
// Where this process sits in a data-parallel job, read from torchrun's environment (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), as `cuset launch`, torchrun and a Slurm
// script that exports them set it. LibTorch-free, so the CLI and its tests need no c10d.
#include <chrono>
#include <functional>
#include <string>

namespace cuset {

struct DistributedEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localWorldSize = 1;
  std::string masterAddr;
  int masterPort = 0;
  // How long a collective or the rendezvous may wait for a peer before the job stops with an error.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};

  bool active() const { return worldSize > 1; }
  bool leader() const { return rank == 0; }
  // "rank 1 of 2" for messages.
  std::string describe() const;
};

using EnvLookup = std::function<const char*(const char*)>;

// World size 1 when WORLD_SIZE is unset or 1. Otherwise every variable must be present and consistent;
// a missing or malformed one is an error naming it (a half-set environment is a broken launcher, and
// guessing would start ranks that wait for each other forever).
DistributedEnv readDistributedEnv(const EnvLookup& lookup);
DistributedEnv readDistributedEnv();  // from this process's environment

}  // namespace cuset
