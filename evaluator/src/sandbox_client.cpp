// The supervisor's side of the sandbox: worker processes and the pool that shares them.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/sandbox.hpp"
#include "sandbox_protocol.hpp"

extern char** environ;

namespace cuset {
namespace {

nlohmann::json launchesToJson(const std::vector<ResolvedLaunch>& launches, const RegionLayout& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : launches) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args) {
      if (a.kind == LaunchArg::Kind::buffer) {
        const BufferSlot* slot = layout.find(a.buffer);
        if (!slot) throw makeError("launch of {}: no buffer '{}' in the device region", l.kernel, a.buffer);
        args.push_back({{"buffer", slot->offset}, {"name", a.buffer}});
      } else {
        args.push_back({{a.type == LaunchArg::ScalarType::int64 ? "int64" : "int32", a.value}});
      }
    }
    out.push_back({{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block}, {"shared", l.sharedBytes}, {"args", args}});
  }
  return out;
}

SimJobResult::Status parseStatus(const std::string& s) {
  if (s == "ok") return SimJobResult::Status::ok;
  if (s == "runtime_error") return SimJobResult::Status::runtimeError;
  if (s == "invalid_submission") return SimJobResult::Status::invalidSubmission;
  if (s == "timeout") return SimJobResult::Status::timeout;
  if (s == "sandbox_violation") return SimJobResult::Status::sandboxViolation;
  return SimJobResult::Status::harnessError;
}

std::string workerExecutable() {
  if (const char* env = std::getenv("CUSET_WORKER"); env && *env) return env;
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw makeError("cannot find the cuset executable for sandbox workers (set CUSET_WORKER)");
  return std::string(path, static_cast<std::size_t>(n));
}

}  // namespace

// One `cuset __worker` process.
class SandboxWorker {
 public:
  explicit SandboxWorker(const SandboxLimits& limits) : limits_(limits) {}
  ~SandboxWorker() { stop(); }
  SandboxWorker(const SandboxWorker&) = delete;
  SandboxWorker& operator=(const SandboxWorker&) = delete;

  SimJobResult run(SimJob& job) {
    if (pid_ < 0) start();
    sandbox::Message request;
    request.header = {{"library", job.library.string()},
                      {"fibers", job.fibers},
                      {"reverse", job.reverseThreadOrder},
                      {"host_threads", limits_.hostThreads},
                      {"stack_bytes", limits_.stackBytes},
                      {"timeout_ms", limits_.timeout.count()},
                      {"launches", launchesToJson(job.launches, *job.layout)}};
    request.payload = std::move(job.region);
    SimJobResult result;
    try {
      sandbox::writeMessage(to_, request);
    } catch (const Error& e) {
      stop();
      result.message = fmt::format("sandbox worker is gone ({})", e.what());
      return result;
    }
    // The worker enforces the job's time limit itself; this outer limit only catches a stuck worker.
    const auto deadline = std::chrono::steady_clock::now() + limits_.timeout + std::chrono::seconds(30);
    auto reply = sandbox::readMessage(from_, deadline);
    if (!reply) {
      const std::string why = describeExit();
      stop();
      result.message = "sandbox worker stopped answering" + why;
      return result;
    }
    result.status = parseStatus(reply->header.value("status", ""));
    result.message = reply->header.value("message", "");
    result.kernelMs = reply->header.value("kernel_ms", 0.0);
    job.region = std::move(reply->payload);
    return result;
  }

 private:
  void start() {
    int toWorker[2], fromWorker[2];
    if (::pipe2(toWorker, O_CLOEXEC) != 0 || ::pipe2(fromWorker, O_CLOEXEC) != 0) {
      throw makeError("cannot create sandbox pipes: {}", std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, toWorker[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fromWorker[1], STDOUT_FILENO);
    const std::string exe = workerExecutable();
    const std::string memory = std::to_string(limits_.memoryBytes);
    std::vector<char*> argv = {const_cast<char*>(exe.c_str()), const_cast<char*>("__worker"), const_cast<char*>("--memory-bytes"),
                               const_cast<char*>(memory.c_str()), nullptr};
    std::vector<std::string> envStrings;
    for (char** e = environ; *e != nullptr; ++e) envStrings.emplace_back(*e);
#if defined(__SANITIZE_ADDRESS__)
    // A kernel's crash must reach the worker as the signal it is: AddressSanitizer's own crash
    // handler would make system calls the sandbox forbids and turn a wild pointer into a violation.
    std::erase_if(envStrings, [](const std::string& s) { return s.rfind("ASAN_OPTIONS=", 0) == 0; });
    envStrings.emplace_back("ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0:detect_leaks=0");
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
      throw makeError("cannot start sandbox worker {}: {}", exe, std::strerror(rc));
    }
    to_ = toWorker[1];
    from_ = fromWorker[0];
  }

  std::string describeExit() {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (WIFSIGNALED(status)) return fmt::format(" (it was killed by signal {})", WTERMSIG(status));
      if (WIFEXITED(status)) return fmt::format(" (it exited with status {})", WEXITSTATUS(status));
    }
    return "";
  }

  void stop() {
    if (to_ >= 0) ::close(std::exchange(to_, -1));
    if (from_ >= 0) ::close(std::exchange(from_, -1));
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
    }
  }

  SandboxLimits limits_;
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

SandboxPool::SandboxPool(std::size_t workers, SandboxLimits limits) : limits_(limits) {
  ::signal(SIGPIPE, SIG_IGN);  // a dying worker must not take the supervisor with it
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i) {
    workers_.push_back(std::make_unique<SandboxWorker>(limits_));
    idle_.push_back(workers_.back().get());
  }
}

SandboxPool::~SandboxPool() = default;

SimJobResult SandboxPool::run(SimJob& job) {
  SandboxWorker* worker = nullptr;
  {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [this] { return !idle_.empty(); });
    worker = idle_.back();
    idle_.pop_back();
  }
  SimJobResult result;
  try {
    result = worker->run(job);
  } catch (...) {
    std::lock_guard lock(mutex_);
    idle_.push_back(worker);
    available_.notify_one();
    throw;
  }
  std::lock_guard lock(mutex_);
  idle_.push_back(worker);
  available_.notify_one();
  return result;
}

}  // namespace cuset
