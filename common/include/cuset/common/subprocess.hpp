#pragma once
// Running a child program (the host compiler for the simulator) with its output captured and a
// wall-time limit. No shell is involved: arguments go to execve as they are.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cuset {

struct SubprocessResult {
  int exitCode = -1;        // valid when !signaled && !timedOut
  int signal = 0;           // terminating signal, or 0
  bool timedOut = false;    // killed at the time limit
  std::string output;       // stdout and stderr together, at most `maxOutputBytes`
  bool ok() const { return !timedOut && signal == 0 && exitCode == 0; }
};

// The Python interpreter that has torch: `preferred` when given, else $CUSET_PYTHON, else
// /usr/bin/python3 (Debian's python3-torch belongs to the system interpreter; a pyenv or venv
// python3 on PATH often has no torch), else python3.
std::string pythonWithTorch(const std::string& preferred = {});

// Throws cuset::Error only when the program cannot be started at all.
SubprocessResult runSubprocess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                               std::size_t maxOutputBytes = 1 << 20);

}  // namespace cuset
