#pragma once
// Running a child program (the host compiler for the simulator) with its output captured and a
// wall-time limit. No shell is involved: arguments go to execve as they are.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cuset {

struct SubprocessResult {
  int exitCode = -1;      // valid when !signaled && !timedOut
  int signal = 0;         // terminating signal, or 0
  bool timedOut = false;  // killed at the time limit
  std::string output;     // stdout and stderr together, at most `maxOutputBytes`
  bool ok() const { return !timedOut && signal == 0 && exitCode == 0; }
};

// The project's one Python interpreter (the one with torch): `preferred` when given, else
// $CUSET_PYTHON, else the one this binary was built with (CMake's CUSET_PYTHON: the checkout's .venv
// that scripts/install-deps.sh makes) while it exists, else python3 on PATH.
std::string pythonWithTorch(const std::string& preferred = {});

// Throws cuset::Error only when the program cannot be started at all.
SubprocessResult runSubprocess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t maxOutputBytes = 1 << 20);

}  // namespace cuset
