#pragma once
// The KernelBench recorder kept warm (docs/kernelbench.md, "Translation speed"): one restricted Python
// process that has imported torch once (`cuset_kernelbench.py serve`) and runs each request in a
// fresh fork of itself. The fork restricts itself exactly as runRestricted restricts a process it
// starts (cuset_restrict_self: the request's Landlock trees and scratch folder, file-size, core and
// memory limits) before the recorder's own seccomp filter and audit hooks, so a request gets
// today's sandbox without paying torch's import (about 5 s of a translation's 7) again.
#include <sys/types.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cuset/common/line_process.hpp"
#include "cuset/evaluator/sandbox/restricted_process.hpp"

namespace cuset::detail {

class WarmRecorder {
 public:
  // Starts the server; null when it does not answer its first request (no torch, no fork): callers
  // then run each request as its own process (runRestricted).
  static std::unique_ptr<WarmRecorder> start(const RestrictedCommand& server);
  ~WarmRecorder();
  WarmRecorder(const WarmRecorder&) = delete;
  WarmRecorder& operator=(const WarmRecorder&) = delete;

  // Runs `request` (its argv, environment, readable trees, scratch folder and limits) in a fork of the
  // server. nullopt when the server itself failed (it is then dead, and the request was not judged).
  std::optional<RestrictedResult> run(const RestrictedCommand& request);
  bool alive() const { return pid_ > 0; }

 private:
  WarmRecorder(pid_t pid, int requests, int responses) : pid_(pid), requests_(requests), responses_(responses) {}
  std::optional<std::string> exchange(const std::string& line, std::chrono::milliseconds timeout);
  void stop();

  pid_t pid_ = -1;
  int requests_ = -1;
  int responses_ = -1;
  PipeLines responseLines_;
};

// Idle servers, one per concurrent translation at most; a server that cannot start is not tried again.
class WarmRecorderPool {
 public:
  explicit WarmRecorderPool(RestrictedCommand server) : server_(std::move(server)) {}
  // Runs the request warm, or returns nullopt (no server could start, or it died in this request).
  std::optional<RestrictedResult> run(const RestrictedCommand& request);

 private:
  RestrictedCommand server_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WarmRecorder>> idle_;
  bool failed_ = false;
};

}  // namespace cuset::detail
