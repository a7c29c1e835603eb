#include "cuset/common/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cuset/common/error.hpp"
#include "cuset/common/resources.hpp"

extern char** environ;

namespace cuset {

PythonChoice choosePython() {
  if (const char* env = std::getenv("CUSET_PYTHON"); env && *env) return {env, "$CUSET_PYTHON"};
  try {
    const Resources& r = resources();
    if (const std::filesystem::path recorded = r.pathIfAny("python"); !recorded.empty() && std::filesystem::exists(recorded)) {
      return {recorded.string(), r.installed() ? "recorded by the install" : "recorded by the build"};
    }
  } catch (const std::exception&) {
    // no resource file: fall through to PATH
  }
  return {"python3", "python3 on PATH"};
}

std::string pythonWithTorch(const std::string& preferred) { return preferred.empty() ? choosePython().path : preferred; }

SubprocessResult runSubprocess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t maxOutputBytes,
                               const std::atomic<bool>* cancel) {
  if (argv.empty()) throw Error("runSubprocess: empty command");
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) throw makeError("cannot create a pipe: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (cancel) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipeFds[1]);
  if (rc != 0) {
    ::close(pipeFds[0]);
    throw makeError("cannot start '{}': {}", argv[0], std::strerror(rc));
  }

  SubprocessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    const bool cancelled = cancel && cancel->load();
    if (left <= 0 || cancelled) {
      (cancelled ? result.cancelled : result.timedOut) = true;
      ::kill(cancel ? -pid : pid, SIGKILL);
      break;
    }
    pollfd p{pipeFds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, cancel ? 100 : 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(pipeFds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed its output
    const std::size_t room = maxOutputBytes > result.output.size() ? maxOutputBytes - result.output.size() : 0;
    result.output.append(buffer, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
  }
  ::close(pipeFds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  if (cancel) ::kill(-pid, SIGKILL);  // whatever the child started and left behind
  if (WIFSIGNALED(status) && !result.timedOut && !result.cancelled) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace cuset
