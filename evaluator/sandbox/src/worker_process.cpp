// Helper processes of the supervisor.
#include "cuset/evaluator/sandbox/worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/resources.hpp"

extern char** environ;

namespace cuset {
namespace {

// $CUSET_WORKER; else this process when it is `cuset`; else the build's own `cuset` (a test or a
// benchmark linking the evaluator), which must never re-execute itself as a worker.
std::string workerExecutable() {
  if (const char* env = std::getenv("CUSET_WORKER"); env && *env) return env;
  if (const std::filesystem::path self = executablePath(); self.filename() == "cuset") return self.string();
  // A test or benchmark linking the evaluator: the cuset its build or install made.
  if (const auto built = resources().pathIfAny("cuset"); !built.empty() && std::filesystem::exists(built)) return built.string();
  throw makeError("cannot find the cuset executable for helper processes (set CUSET_WORKER to its path)");
}

}  // namespace

std::vector<std::string> workerEnvironment(char* const* environment, WorkerEnvironment mode) {
  std::vector<std::string> kept;
  for (char* const* e = environment; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    // The worker is this same executable: the library path that let it start must reach it, or it
    // dies in the loader (exit 127) wherever cuset's libraries live outside the system folders.
    if (mode == WorkerEnvironment::inherit || entry.starts_with("CUSET_LOG=") || entry.starts_with("LD_LIBRARY_PATH=") ||
        entry.starts_with("ASAN_OPTIONS=") || entry.starts_with("UBSAN_OPTIONS=") || entry.starts_with("LSAN_OPTIONS=")) {
      kept.emplace_back(entry);
    }
  }
  return kept;
}

WorkerProcess::WorkerProcess(std::vector<std::string> arguments, bool sharedPayload, WorkerEnvironment environment)
    : arguments_(std::move(arguments)), environment_(environment) {
  if (!sharedPayload) return;
  try {
    shared_ = sandbox::SharedPayload::create();
    arguments_.insert(arguments_.end(), {"--payload-fd", std::to_string(kWorkerPayloadFd)});
  } catch (const Error& e) {
    log::warn("{}; regions go through the pipe instead (slower for large regions)", e.what());
  }
}

void WorkerProcess::start() {
  int toWorker[2], fromWorker[2];
  if (::pipe2(toWorker, O_CLOEXEC) != 0 || ::pipe2(fromWorker, O_CLOEXEC) != 0) {
    throw makeError("cannot create sandbox pipes: {}", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, toWorker[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fromWorker[1], STDOUT_FILENO);
  if (shared_) posix_spawn_file_actions_adddup2(&actions, shared_->fd(), kWorkerPayloadFd);
  const std::string exe = workerExecutable();
  std::vector<char*> argv = {const_cast<char*>(exe.c_str())};
  for (auto& a : arguments_) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envStrings = workerEnvironment(environ, environment_);
#if defined(__SANITIZE_ADDRESS__)
  // A kernel's crash must reach the worker as the signal it is: AddressSanitizer's own crash
  // handler would make system calls the sandbox forbids and turn a wild pointer into a violation;
  // so would its report of an allocation it cannot satisfy, where a plain build returns null.
  std::erase_if(envStrings, [](const std::string& s) { return s.rfind("ASAN_OPTIONS=", 0) == 0; });
  envStrings.emplace_back("ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0:detect_leaks=0:allocator_may_return_null=1");
#endif
  std::vector<char*> envp;
  for (auto& s : envStrings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(toWorker[0]);
  ::close(fromWorker[1]);
  if (rc != 0) {
    ::close(toWorker[1]);
    ::close(fromWorker[0]);
    pid_ = -1;
    throw makeError("cannot start worker {}: {}", exe, std::strerror(rc));
  }
  to_ = toWorker[1];
  from_ = fromWorker[0];
}

std::string WorkerProcess::describeExit() {
  int status = 0;
  if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    if (WIFSIGNALED(status)) return fmt::format(" (it was killed by signal {})", WTERMSIG(status));
    if (WIFEXITED(status)) return fmt::format(" (it exited with status {})", WEXITSTATUS(status));
  }
  return "";
}

void WorkerProcess::stop() {
  if (to_ >= 0) ::close(std::exchange(to_, -1));
  if (from_ >= 0) ::close(std::exchange(from_, -1));
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

Expected<sandbox::Message> WorkerProcess::call(const sandbox::Message& request, std::chrono::steady_clock::time_point deadline) {
  // A worker that ended between calls (not through a reply saying so) must not cost this request.
  if (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == pid_) {
    pid_ = -1;
    stop();
  }
  if (pid_ < 0) start();
  try {
    sandbox::writeMessage(to_, request, shared_ ? &*shared_ : nullptr);
  } catch (const Error& e) {
    stop();
    return Unexpected(fmt::format("worker is gone ({})", e.what()));
  }
  std::optional<sandbox::Message> reply;
  try {
    reply = sandbox::readMessage(from_, deadline, shared_ ? &*shared_ : nullptr);
  } catch (const Error& e) {
    stop();
    return Unexpected(fmt::format("worker sent a malformed reply ({})", e.what()));
  }
  if (!reply) {
    const std::string why = describeExit();
    stop();
    return Unexpected("worker stopped answering" + why);
  }
  // The worker's last reply (e.g. after a sticky CUDA error): reap it now so the next call starts a
  // new one. A shared reply payload stays valid: the file belongs to this side.
  if (reply->header.value("worker_exits", false)) stop();
  return std::move(*reply);
}

}  // namespace cuset
