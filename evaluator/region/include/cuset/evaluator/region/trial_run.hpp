#pragma once
// The outcome of running one trial's launches on a backend (simulator sandbox or GPU worker).
#include <string>

namespace cuset {

struct TrialRun {
  // tooSlow: still making progress at the slow limit (the simulator's limit: `unsupported`).
  enum class Status { ok, runtimeError, invalidSubmission, timeout, tooSlow, sandboxViolation, harnessError };
  Status status = Status::harnessError;
  std::string message;
  double kernelMs = 0.0;  // the backend's time for the launches (a timing sample only where the backend says so)
};

}  // namespace cuset
