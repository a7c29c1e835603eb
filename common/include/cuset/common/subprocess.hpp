#pragma once
// Running a child program (the host compiler for the simulator) with its output captured and a
// wall-time limit. No shell is involved: arguments go to execve as they are.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cuset {

struct SubprocessResult {
  int exitCode = -1;       // valid when !signaled && !timedOut
  int signal = 0;          // terminating signal, or 0
  bool timedOut = false;   // killed at the time limit
  bool cancelled = false;  // killed because the caller asked
  std::string output;      // stdout and stderr together, at most `maxOutputBytes`
  bool ok() const { return !timedOut && !cancelled && signal == 0 && exitCode == 0; }
};

// The project's one Python interpreter (the one with torch): `preferred` when given, else
// $CUSET_PYTHON, else the one the build or install recorded (resources.hpp: CMake's CUSET_PYTHON, the
// .venv scripts/install-deps.sh makes) while it exists, else python3 on PATH.
std::string pythonWithTorch(const std::string& preferred = {});
// The same choice with the reason for it ("$CUSET_PYTHON", "recorded by the install", ...), for doctor.
struct PythonChoice {
  std::string path, why;
};
PythonChoice choosePython();

// Throws cuset::Error only when the program cannot be started at all. With `cancel`, the child runs in
// a process group of its own, and the group (the child and whatever it started) is killed at the time
// limit or as soon as *cancel is true (`cancelled` in the result).
SubprocessResult runSubprocess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t maxOutputBytes = 1 << 20,
                               const std::atomic<bool>* cancel = nullptr);

}  // namespace cuset
