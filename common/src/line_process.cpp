#include "cuset/common/line_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"

extern char** environ;

namespace cuset {

PipeLines::End PipeLines::next(int fd, std::string& line, std::chrono::steady_clock::time_point deadline, const std::atomic<bool>* cancel) {
  char buffer[65536];
  while (true) {
    if (const auto end = pending_.find('\n'); end != std::string::npos) {
      line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return End::line;
    }
    if (cancel && cancel->load()) return End::cancelled;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return End::timedOut;
    pollfd p{fd, POLLIN, 0};
    // A cancellation is looked at every 100 ms; without one, the wait is the deadline's (in slices of 1 s).
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, cancel ? 100 : 1000)));
    if (ready < 0 && errno != EINTR) return End::closed;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return End::closed;  // the writer closed its end: it has ended
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

LineProcess::LineProcess(const std::vector<std::string>& argv, const std::filesystem::path& stderrFile) : stderrFile_(stderrFile) {
  if (argv.empty()) throw Error("LineProcess: empty command");
  // A child that dies while a request is written must not take this process with it.
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw makeError("cannot create a pipe: {}", std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw makeError("cannot create a pipe: {}", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderrFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    pid_ = -1;
    throw makeError("cannot start '{}': {}", argv[0], std::strerror(rc));
  }
  requests_ = in[1];
  replies_ = out[0];
}

LineProcess::~LineProcess() { stop(); }

void LineProcess::stop() {
  if (pid_ <= 0) return;
  ::close(requests_);
  ::close(replies_);
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid_, SIGKILL);  // whatever it started and left behind
  if (ending_.empty()) {
    ending_ = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status)) : fmt::format("exited with status {}", WEXITSTATUS(status));
  }
  pid_ = -1;
}

LineProcess::Reply LineProcess::exchange(const std::string& request, std::chrono::milliseconds timeout, const std::atomic<bool>* cancel) {
  Reply reply;
  if (pid_ <= 0) return reply;
  if (!request.empty()) {
    try {
      writeAll(requests_, request + "\n", "the request pipe");
    } catch (const Error&) {  // it has ended: no reply can come
      stop();
      return reply;
    }
  }
  std::string line;
  const PipeLines::End end = replyLines_.next(replies_, line, std::chrono::steady_clock::now() + timeout, cancel);
  if (end == PipeLines::End::line) {
    reply.line = std::move(line);
    return reply;
  }
  reply.timedOut = end == PipeLines::End::timedOut;
  reply.cancelled = end == PipeLines::End::cancelled;
  stop();
  if (reply.timedOut) ending_ = "killed at its time limit";
  if (reply.cancelled) ending_ = "killed: cancelled";
  return reply;
}

std::string LineProcess::stderrTail(std::size_t bytes) const {
  std::string s;
  try {
    s = readFile(stderrFile_);
  } catch (const Error&) {  // no log to quote
  }
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

}  // namespace cuset
