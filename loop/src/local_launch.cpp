#include "cuset/loop/local_launch.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/resources.hpp"

extern char** environ;

namespace cuset {
namespace {

volatile sig_atomic_t pendingSignal = 0;
void remember(int signal) { pendingSignal = signal; }

int statusOf(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 1;
}

// This process's environment with torchrun's variables set for one rank.
std::vector<std::string> rankEnvironment(const LaunchOptions& o, int localRank) {
  const std::vector<std::pair<std::string, std::string>> set = {
      {"RANK", std::to_string(o.nodeRank * o.nproc + localRank)},
      {"LOCAL_RANK", std::to_string(localRank)},
      {"WORLD_SIZE", std::to_string(o.nnodes * o.nproc)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc)},
      {"GROUP_RANK", std::to_string(o.nodeRank)},
      {"MASTER_ADDR", o.masterAddr},
      {"MASTER_PORT", std::to_string(o.masterPort)},
  };
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(set.begin(), set.end(), [&](const auto& kv) { return kv.first == name; })) env.push_back(entry);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

}  // namespace

int launchLocal(const LaunchOptions& o) {
  if (o.nproc < 1 || o.nproc > 1024) throw makeError("--nproc {}: expected 1 to 1024", o.nproc);
  if (o.nnodes < 1 || o.nodeRank < 0 || o.nodeRank >= o.nnodes)
    throw makeError("--node-rank {} of --nnodes {}: expected 0 <= rank < nodes", o.nodeRank, o.nnodes);
  if (o.masterPort < 1 || o.masterPort > 65535) throw makeError("--master-port {}: expected 1 to 65535", o.masterPort);
  if (o.command.empty()) throw Error("cuset launch: give the subcommand to run after --, e.g. `cuset launch --nproc 2 -- train --config c.yaml`");
  const std::string binary = o.binary.empty() ? executablePath().string() : o.binary.string();
  // Only `train` divides its work by rank; any other subcommand would run N whole copies, and N copies
  // writing one run folder race each other.
  if (o.binary.empty() && o.command.front() != "train" && o.nproc * o.nnodes > 1) {
    log::warn(
        "launch: `{}` does not read RANK or WORLD_SIZE, so each of the {} ranks runs all of it; only `train` is data-parallel "
        "(for evaluation, use `cuset eval --shard` or `cuset slurm eval`)",
        o.command.front(), o.nproc * o.nnodes);
  }

  struct sigaction action {};
  action.sa_handler = remember;
  sigemptyset(&action.sa_mask);
  struct sigaction oldInt {
  }, oldTerm{};
  sigaction(SIGINT, &action, &oldInt);
  sigaction(SIGTERM, &action, &oldTerm);

  std::vector<pid_t> pids;
  auto stopAll = [&](int signal) {
    for (pid_t pid : pids) {
      if (pid > 0) ::kill(pid, signal);
    }
  };
  for (int rank = 0; rank < o.nproc; ++rank) {
    std::vector<std::string> args = {binary};
    args.insert(args.end(), o.command.begin(), o.command.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = rankEnvironment(o, rank);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    if (const int rc = ::posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), envp.data()); rc != 0) {
      stopAll(SIGTERM);
      throw makeError("cannot start rank {} ({}): {}", rank, binary, std::strerror(rc));
    }
    pids.push_back(pid);
  }

  int result = 0;
  std::size_t running = pids.size();
  // When the ranks still running get SIGKILL; time_point::max() while none is due.
  auto killAt = std::chrono::steady_clock::time_point::max();
  const auto noKill = killAt;
  while (running > 0) {
    if (pendingSignal) {
      const int s = pendingSignal;
      pendingSignal = 0;
      log::info("launch: passing signal {} to {} process(es)", s, running);
      stopAll(s);
      if (killAt == noKill) killAt = std::chrono::steady_clock::now() + o.grace;
      if (result == 0) result = 128 + s;
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (pids[i] != done) continue;
        pids[i] = -1;
        --running;
        const int code = statusOf(status);
        if (code != 0 && result == 0) {
          result = code;
          log::error("launch: rank {} failed (exit status {}); stopping the other {}", o.nodeRank * o.nproc + static_cast<int>(i), code, running);
          stopAll(SIGTERM);
          killAt = std::chrono::steady_clock::now() + o.grace;
        }
      }
      continue;
    }
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= killAt) {
      stopAll(SIGKILL);
      killAt = noKill;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  return result;
}

}  // namespace cuset
