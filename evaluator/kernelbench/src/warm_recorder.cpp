#include "warm_recorder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"

namespace cuset::detail {

using nlohmann::json;

namespace {

json requestJson(const RestrictedCommand& c) {
  json readable = json::array();
  for (const auto& r : c.readable) readable.push_back(r.string());
  return {{"argv", c.argv},
          {"environment", c.environment},
          {"readable", readable},
          {"scratch", c.scratch.string()},
          {"scratch_file_bytes", c.scratch.empty() ? 0 : c.scratchFileBytes},
          {"memory_bytes", c.memoryBytes},
          {"timeout_ms", c.timeout.count()},
          {"max_output_bytes", c.maxOutputBytes}};
}

}  // namespace

std::unique_ptr<WarmRecorder> WarmRecorder::start(const RestrictedCommand& server) {
  int requests[2], responses[2];
  if (::pipe2(requests, O_CLOEXEC) != 0) return nullptr;
  if (::pipe2(responses, O_CLOEXEC) != 0) {
    ::close(requests[0]);
    ::close(requests[1]);
    return nullptr;
  }
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_t pid = -1;
  try {
    pid = spawnRestricted(server, requests[0], responses[1], null);
  } catch (const std::exception&) {
  }
  ::close(requests[0]);
  ::close(responses[1]);
  ::close(null);
  if (pid <= 0) {
    ::close(requests[1]);
    ::close(responses[0]);
    return nullptr;
  }
  std::unique_ptr<WarmRecorder> w(new WarmRecorder(pid, requests[1], responses[0]));
  // Its first line says it has imported everything and is ready; torch's import may take a while on a
  // loaded machine.
  const auto ready = w->exchange("", server.timeout);
  if (!ready || json::parse(*ready, nullptr, false).value("status", "") != "ready") return nullptr;
  return w;
}

WarmRecorder::~WarmRecorder() { stop(); }

void WarmRecorder::stop() {
  if (pid_ <= 0) return;
  ::close(requests_);
  ::close(responses_);
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::optional<std::string> WarmRecorder::exchange(const std::string& line, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  if (!line.empty()) {
    try {
      writeAll(requests_, line + "\n", "the warm recorder's request pipe");
    } catch (const Error&) {  // it has ended
      stop();
      return std::nullopt;
    }
  }
  std::string answer;
  if (responseLines_.next(responses_, answer, std::chrono::steady_clock::now() + timeout) == PipeLines::End::line) return answer;
  stop();
  return std::nullopt;
}

std::optional<RestrictedResult> WarmRecorder::run(const RestrictedCommand& request) {
  // The server ends a request at its own time limit; a server that does not answer a little after it is
  // itself stuck, and is ended.
  const auto answer = exchange(requestJson(request).dump(), request.timeout + std::chrono::seconds(10));
  if (!answer) return std::nullopt;
  const json j = json::parse(*answer, nullptr, false);
  if (j.is_discarded() || !j.contains("exit")) {
    stop();
    return std::nullopt;
  }
  RestrictedResult r;
  r.exitCode = j.value("exit", -1);
  r.signal = j.value("signal", 0);
  r.timedOut = j.value("timed_out", false);
  r.result = j.value("result", "");
  r.log = j.value("log", "");
  r.resultTruncated = j.value("truncated", false);
  r.landlocked = j.value("landlocked", false);
  r.landlockWhy = j.value("landlock_why", "");
  return r;
}

std::optional<RestrictedResult> WarmRecorderPool::run(const RestrictedCommand& request) {
  std::unique_ptr<WarmRecorder> server;
  {
    std::lock_guard lock(mutex_);
    if (failed_) return std::nullopt;
    if (!idle_.empty()) {
      server = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!server) {
    server = WarmRecorder::start(server_);
    if (!server) {
      std::lock_guard lock(mutex_);
      failed_ = true;
      return std::nullopt;
    }
  }
  auto result = server->run(request);
  if (server->alive()) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(server));
  }
  return result;
}

}  // namespace cuset::detail
