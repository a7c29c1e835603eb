#pragma once
// A helper program that runs candidate code outside the simulator (the KernelBench translator's
// Python, DESIGN §3): started with an environment of its own, a memory limit, no file writes
// (RLIMIT_FSIZE 0) but in its scratch folder, and, where the kernel has Landlock, able to read only
// beneath the trees named, write nothing but /dev/null and its scratch folder, and use no TCP. The program adds what it can itself (the translator
// installs a seccomp filter before it runs the candidate). Its result travels on descriptor 3; stdout
// and stderr are its log.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace cuset {

struct RestrictedCommand {
  std::vector<std::string> argv;                // argv[0]: an absolute path
  std::vector<std::string> environment;         // NAME=value, all it gets
  std::vector<std::filesystem::path> readable;  // trees it may read and execute from
  // A private folder (it exists) beneath which it may make, write and remove files, each at most
  // scratchFileBytes; empty: it writes nothing.
  std::filesystem::path scratch;
  std::size_t scratchFileBytes = std::size_t{64} << 20;
  std::chrono::milliseconds timeout{60000};
  std::size_t memoryBytes = std::size_t{8} << 30;  // RLIMIT_AS
  std::size_t maxOutputBytes = std::size_t{16} << 20;
};

struct RestrictedResult {
  int exitCode = -1;             // when it exited
  int signal = 0;                // the signal that ended it, or 0
  bool timedOut = false;         // killed at the time limit
  std::string result;            // what it wrote on descriptor 3
  std::string log;               // its stdout and stderr, at most maxOutputBytes
  bool resultTruncated = false;  // the result went past maxOutputBytes (what was kept is incomplete)
  bool landlocked = false;       // whether the file-system and network restriction was in force
  std::string landlockWhy;       // why not, when it was not
};

// Throws cuset::Error only when the program cannot be started at all.
RestrictedResult runRestricted(const RestrictedCommand& command);

// Starts the program as runRestricted does, but leaves it running: its stdin is inputFd, descriptor 3
// resultFd, stdout and stderr logFd (the caller's pipe ends; close them in the parent after this).
// The caller waits for it and kills its process group (its pid). For a warm helper that serves many
// requests (the KernelBench recorder's fork server); the command's timeout is not applied.
pid_t spawnRestricted(const RestrictedCommand& command, int inputFd, int resultFd, int logFd);

}  // namespace cuset
