#include "cuset/evaluator/sandbox/restricted_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cuset/common/error.hpp"
#include "landlock.hpp"

namespace cuset {
namespace {

// Between fork and exec only system calls: everything the child needs is prepared before the fork.
[[noreturn]] void childExec(const RestrictedCommand& c, char* const* argv, char* const* envp, int inputFd, int resultFd, int logFd, int rulesetFd) {
  ::setpgid(0, 0);  // its own group: the time limit kills whatever it started
  if (rulesetFd >= 0 && detail::enforceLandlock(rulesetFd) != 0) ::_exit(126);
  ::dup2(inputFd >= 0 ? inputFd : ::open("/dev/null", O_RDONLY), STDIN_FILENO);
  ::dup2(logFd, STDOUT_FILENO);
  ::dup2(logFd, STDERR_FILENO);
  ::dup2(resultFd, 3);
  ::closefrom(4);
  rlimit none{0, 0};
  rlimit files{c.scratch.empty() ? 0 : c.scratchFileBytes, c.scratch.empty() ? 0 : c.scratchFileBytes};
  ::setrlimit(RLIMIT_FSIZE, &files);
  ::setrlimit(RLIMIT_CORE, &none);
  if (!c.scratch.empty() && ::chdir(c.scratch.c_str()) != 0) ::_exit(126);
#if !defined(__SANITIZE_ADDRESS__)
  rlimit memory{c.memoryBytes, c.memoryBytes};
  ::setrlimit(RLIMIT_AS, &memory);
#endif
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

struct Prepared {
  explicit Prepared(const RestrictedCommand& c)
      : ruleset(c.readable, {"/dev/null"}, c.scratch.empty() ? std::vector<std::filesystem::path>{} : std::vector{c.scratch}) {
    if (c.argv.empty()) throw Error("runRestricted: empty command");
    for (const auto& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : c.environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  detail::LandlockRuleset ruleset;
  std::vector<char*> argv, envp;
};

}  // namespace

pid_t spawnRestricted(const RestrictedCommand& c, int inputFd, int resultFd, int logFd) {
  Prepared p(c);
  const pid_t pid = ::fork();
  if (pid < 0) throw makeError("cannot start {}: {}", c.argv[0], std::strerror(errno));
  if (pid == 0) childExec(c, p.argv.data(), p.envp.data(), inputFd, resultFd, logFd, p.ruleset.fd());
  return pid;
}

RestrictedResult runRestricted(const RestrictedCommand& c) {
  Prepared p(c);
  const detail::LandlockRuleset& ruleset = p.ruleset;
  int resultPipe[2], logPipe[2];
  if (::pipe2(resultPipe, O_CLOEXEC) != 0) throw makeError("cannot create a pipe: {}", std::strerror(errno));
  if (::pipe2(logPipe, O_CLOEXEC) != 0) {
    ::close(resultPipe[0]);
    ::close(resultPipe[1]);
    throw makeError("cannot create a pipe: {}", std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw makeError("cannot start {}: {}", c.argv[0], std::strerror(errno));
  if (pid == 0) childExec(c, p.argv.data(), p.envp.data(), -1, resultPipe[1], logPipe[1], ruleset.fd());
  ::close(resultPipe[1]);
  ::close(logPipe[1]);

  RestrictedResult r;
  r.landlocked = ruleset.fd() >= 0;
  r.landlockWhy = ruleset.why();
  const auto deadline = std::chrono::steady_clock::now() + c.timeout;
  pollfd fds[2] = {{resultPipe[0], POLLIN, 0}, {logPipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.result, &r.log};
  int open = 2;
  char buffer[16384];
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timedOut = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      std::string& sink = *sinks[i];
      const std::size_t room = c.maxOutputBytes > sink.size() ? c.maxOutputBytes - sink.size() : 0;
      if (i == 0 && static_cast<std::size_t>(n) > room) r.resultTruncated = true;
      sink.append(buffer, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  // It closed its pipes: it has ended, or is about to (a grandchild could keep them open; the group kill
  // above and here ends those too).
  int status = 0;
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !r.timedOut) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace cuset
