// The worker's side of the sandbox (`cuset __worker`). Never runs candidate code itself: each job runs
// in a forked child that loads the candidate library, restricts itself, and runs the launches.
#include <fcntl.h>
#include <fmt/format.h>
#include <seccomp.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"
#include "cuset/evaluator/sandbox/sandbox_support.hpp"
#include "cuset/evaluator/sandbox/sim_library.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/shared_payload.hpp"
#include "cuset_sim/runtime.hpp"
#include "buffer_fences.hpp"
#include "landlock.hpp"
#include "module_state.hpp"
#include "seccomp_context.hpp"
#include "slow_watch.hpp"

namespace cuset {
namespace {

// Shared between the worker and one child: how the child's job ended.
struct ChildStatus {
  enum Kind : int { none = 0, ok, runtimeError, invalidSubmission, setupError, violation };
  std::atomic<int> kind;
  std::atomic<int> syscall;
  double kernelMs;
  alignas(8) std::uint64_t blocksDone;  // LaunchOptions::blocksDone: the supervisor's sign of progress
  char message[8192];
};

ChildStatus* g_status = nullptr;  // for the SIGSYS handler

void setMessage(ChildStatus* s, ChildStatus::Kind kind, const std::string& message) {
  std::snprintf(s->message, sizeof(s->message), "%s", message.c_str());
  s->kind.store(kind);
}

void onForbiddenSyscall(int, siginfo_t* info, void*) {
  g_status->syscall.store(info->si_syscall);
  g_status->kind.store(ChildStatus::violation);
  ::_exit(97);
}

// The system calls a running kernel gets: compute, memory, its host threads' synchronisation, clocks
// and exiting; signals only to its own process (abort, a failed assert); writes only to stderr, which
// is /dev/null. Everything else traps (SIGSYS: a sandbox_violation naming the call): no files, no
// processes or threads, no sockets, no signals to the worker, the supervisor or anyone else.
void allowRunning(scmp_filter_ctx filter, pid_t self) {
  for (int nr : {SCMP_SYS(read),           SCMP_SYS(mmap),        SCMP_SYS(munmap),         SCMP_SYS(mprotect),      SCMP_SYS(mremap),
                 SCMP_SYS(madvise),        SCMP_SYS(brk),         SCMP_SYS(futex),          SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep),
                 SCMP_SYS(nanosleep),      SCMP_SYS(sched_yield), SCMP_SYS(exit),           SCMP_SYS(exit_group),    SCMP_SYS(rt_sigreturn),
                 SCMP_SYS(rt_sigprocmask), SCMP_SYS(getpid),      SCMP_SYS(gettid),         SCMP_SYS(sigaltstack),   SCMP_SYS(restart_syscall),
                 SCMP_SYS(getrandom),      SCMP_SYS(rseq),        SCMP_SYS(set_robust_list)}) {
    seccomp_rule_add(filter, SCMP_ACT_ALLOW, nr, 0);
  }
  seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(self)));
  seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, 2));
}

enum class Stage { loading, running };

// Installed on every thread (the host threads exist already). Filters stack, so the running filter
// after the library is loaded takes away what loading needed: reading the library file. Loading runs
// under an allow-list too, so code the loader runs (SimCompiler refuses libraries that have any) can
// only read files, which Landlock narrows to the library itself where the kernel has it.
void installFilter(Stage stage, pid_t self) {
  const detail::SeccompContext context(seccomp_init(SCMP_ACT_TRAP));
  if (!context) throw std::runtime_error("seccomp_init failed");
  scmp_filter_ctx filter = context.get();
  allowRunning(filter, self);
  if (stage == Stage::loading) {
    // seccomp: for the running filter, which only ever takes more away.
    for (int nr : {SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(pread64), SCMP_SYS(lseek), SCMP_SYS(seccomp)}) {
      seccomp_rule_add(filter, SCMP_ACT_ALLOW, nr, 0);
    }
    // Opening for reading only: no write access, no creating, no truncating.
    const scmp_datum_t forbidden = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND;
    seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, forbidden, O_RDONLY));
    seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, forbidden, O_RDONLY));
  }
  seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
  seccomp_attr_set(filter, SCMP_FLTATR_CTL_NNP, 0);  // set once by the child itself: prctl is not on the list
  const int rc = seccomp_load(filter);
  if (rc != 0) throw std::runtime_error(std::string("seccomp_load failed: ") + std::strerror(-rc));
}

std::vector<unsigned char> scalarBytes(const nlohmann::json& a) {
  const std::string hex = a.at("scalar").get<std::string>();
  std::vector<unsigned char> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string checkParameters(const cuset_sim::KernelEntry& entry, const nlohmann::json& args) {
  const int given = static_cast<int>(args.size());
  if (entry.paramCount != given) {
    return "kernel '" + std::string(entry.name) + "' takes " + std::to_string(entry.paramCount) + " parameter(s) but the plan passes " +
           std::to_string(given);
  }
  for (int i = 0; i < given; ++i) {
    const auto& a = args[static_cast<std::size_t>(i)];
    const auto kind = entry.paramKinds[i];
    const unsigned size = entry.paramSizes[i];
    const std::string where = "parameter " + std::to_string(i) + " of kernel '" + entry.name + "'";
    if (a.contains("buffer") || a.contains("null")) {
      if (kind != cuset_sim::ParamKind::pointer) return where + " is not a pointer, but the plan passes buffer '" + a.value("name", "nullptr") + "'";
      continue;
    }
    const std::string type = a.value("type", "");
    const bool floating = type.starts_with("float");
    const bool integral = type.starts_with("int") || type.starts_with("uint");
    if (kind == cuset_sim::ParamKind::pointer) return where + " is a pointer, but the plan passes " + type;
    if (kind == cuset_sim::ParamKind::integer && !integral) return where + " is an integer, but the plan passes " + type;
    if (kind == cuset_sim::ParamKind::floating && !floating) return where + " is a floating-point value, but the plan passes " + type;
    if (scalarBytes(a).size() != size) {
      if (type == "int32")
        return where + " is a " + std::to_string(size) + "-byte integer but the manifest passes a 32-bit int (use {size: ..., type: int64})";
      return where + " is " + std::to_string(size) + " bytes but the plan passes a " + type + " of " + std::to_string(scalarBytes(a).size());
    }
  }
  return {};
}

// One launch of the job with its arguments in the region, ready for cuset_sim::run_launch.
struct PreparedLaunch {
  cuset_sim::LaunchSpec spec;
  std::vector<std::array<std::max_align_t, 4>> values;  // scalar storage, aligned for any parameter up to 64 bytes
  std::vector<void*> pointers;
  std::vector<void*> args;
};

// Fills `p` (which must not move afterwards: its args point into it). A kernel the library lacks, or
// arguments its parameters do not take, end the child with that status.
void prepareLaunch(const nlohmann::json& l, const SimLibrary& library, std::byte* region, ChildStatus* status, PreparedLaunch& p) {
  const std::string name = l.at("kernel").get<std::string>();
  const cuset_sim::KernelEntry* entry = library.entry(name);
  if (entry == nullptr) {
    setMessage(status, ChildStatus::setupError, "kernel '" + name + "' is missing from the kernel library");
    ::_exit(0);
  }
  if (std::string why = checkParameters(*entry, l.at("args")); !why.empty()) {
    setMessage(status, ChildStatus::invalidSubmission, why);
    ::_exit(0);
  }
  const auto& args = l.at("args");
  p.values.resize(args.size());
  p.pointers.resize(args.size());
  for (std::size_t a = 0; a < args.size(); ++a) {
    if (args[a].contains("buffer")) {
      p.pointers[a] = region + args[a].at("buffer").get<std::size_t>();
      p.args.push_back(&p.pointers[a]);
    } else if (args[a].contains("null")) {
      p.pointers[a] = nullptr;
      p.args.push_back(&p.pointers[a]);
    } else {
      const auto bytes = scalarBytes(args[a]);
      if (bytes.size() > sizeof(p.values[a])) throw std::runtime_error("a scalar argument over 64 bytes");
      std::memcpy(&p.values[a], bytes.data(), bytes.size());
      p.args.push_back(&p.values[a]);
    }
  }
  p.spec.kernel = entry;
  p.spec.args = p.args.data();
  for (int d = 0; d < 3; ++d) {
    p.spec.grid[d] = l.at("grid")[static_cast<std::size_t>(d)].get<unsigned>();
    p.spec.block[d] = l.at("block")[static_cast<std::size_t>(d)].get<unsigned>();
  }
  p.spec.dynamicSharedBytes = l.at("shared").get<std::size_t>();
}

// `spare`: mapped memory after the region (the shared file's unused room), made inaccessible here so
// that a write past the region faults as it would past an exactly sized mapping.
// `state`: the candidate's saved library data (module_state.hpp), or null to start from the library's own.
[[noreturn]] void childMain(const nlohmann::json& job, std::byte* region, std::span<std::byte> spare, ChildStatus* status,
                            detail::ModuleState* state) {
  try {
    if (!spare.empty() && ::mprotect(spare.data(), spare.size(), PROT_NONE) != 0) {
      throw std::runtime_error(std::string("cannot protect the region's surroundings: ") + std::strerror(errno));
    }
    if (std::string why = detail::protectBufferFences(job.value("fences", nlohmann::json::array()), region,
                                                      {status->message, &status->kind, ChildStatus::runtimeError});
        !why.empty()) {
      throw std::runtime_error(why);
    }
    detail::setTailReads(job.value("tails", nlohmann::json::array()), region);
    detail::setWatchedBuffers(job.value("watched", nlohmann::json::array()), region);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::closefrom(3);  // the supervisor's pipes above all: the candidate reaches no channel
    struct sigaction action {};
    action.sa_sigaction = onForbiddenSyscall;
    action.sa_flags = SA_SIGINFO;
    ::sigaction(SIGSYS, &action, nullptr);
    g_status = status;
    // Nothing of the worker's environment reaches candidate code (the worker itself starts with an
    // empty one: WorkerEnvironment::minimal).
    ::clearenv();
    const std::filesystem::path libraryPath = job.at("library").get<std::string>();
    // Landlock applies to the calling thread and the threads it starts afterwards: before the host threads.
    if (detail::landlockAbi() > 0) {
      if (std::string why = detail::restrictToReading({libraryPath}); !why.empty()) {
        setMessage(status, ChildStatus::setupError, "sandbox child: cannot restrict the file system: " + why);
        ::_exit(0);
      }
    }
    cuset_sim::start_host_threads(job.at("host_threads").get<int>());
    const pid_t self = ::getpid();
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) throw std::runtime_error(std::string("no_new_privs: ") + std::strerror(errno));
    installFilter(Stage::loading, self);

    auto library = SimLibrary::open(libraryPath);
    if (!library) {
      setMessage(status, ChildStatus::setupError, library.error());
      ::_exit(0);
    }
    installFilter(Stage::running, self);
    if (state) state->restore(library->loadAddress());

    const auto& launches = job.at("launches");
    std::vector<PreparedLaunch> prepared(launches.size());  // in place: each one's args point into itself
    for (std::size_t i = 0; i < launches.size(); ++i) prepareLaunch(launches[i], *library, region, status, prepared[i]);
    cuset_sim::LaunchOptions options;
    options.useFibers = job.at("fibers").get<bool>();
    options.reverseThreadOrder = job.at("reverse").get<bool>();
    options.sharedPoison = job.at("shared_poison").get<int>();
    // 0 unchecked, 1 race check, 2 lockstep (the supervisor's value: anything else is taken as 0).
    const int accesses = job.value("shared_accesses", 0);
    options.sharedAccesses = accesses == 1   ? cuset_sim::SharedAccesses::raceCheck
                             : accesses == 2 ? cuset_sim::SharedAccesses::lockstep
                                             : cuset_sim::SharedAccesses::unchecked;
    options.raceAcrossBlocks = job.value("race_across_blocks", true);
    options.stackBytes = job.at("stack_bytes").get<std::size_t>();
    options.blocksDone = &status->blocksDone;

    timespec t0{}, t1{};
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    for (const auto& p : prepared) {
      const cuset_sim::LaunchOutcome outcome = cuset_sim::run_launch(p.spec, options);
      if (!outcome.ok) {
        setMessage(status, ChildStatus::runtimeError, outcome.error);
        ::_exit(0);
      }
    }
    ::clock_gettime(CLOCK_MONOTONIC, &t1);
    status->kernelMs = static_cast<double>(t1.tv_sec - t0.tv_sec) * 1e3 + static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (state) state->save(library->loadAddress());
    setMessage(status, ChildStatus::ok, "");
  } catch (const std::exception& e) {
    setMessage(status, ChildStatus::setupError, std::string("sandbox child: ") + e.what());
  }
  ::_exit(0);
}

std::string signalDescription(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access: a wild or out-of-range pointer, or a stack overflow)";
    case SIGBUS:
      return "SIGBUS (misaligned or invalid memory access)";
    case SIGFPE:
      return "SIGFPE (arithmetic error, e.g. integer division by zero)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (aborted, e.g. a failed assert)";
    case SIGKILL:
      return "SIGKILL (killed, e.g. over the memory limit)";
    default:
      return "signal " + std::to_string(sig);
  }
}

// The state of the candidate the worker serves now: its trials come to this worker (SandboxPool::Lease)
// under one `state_key`; a job with another key or library starts from the library's own data.
detail::ModuleState* moduleStateFor(const nlohmann::json& job) {
  struct Current {
    std::string key;
    std::string library;
    detail::ModuleState state;
  };
  static std::optional<Current> current;
  const std::string key = job.value("state_key", "");
  const std::string library = job.at("library").get<std::string>();
  if (key.empty()) return nullptr;
  if (current && current->key == key && current->library == library) return &current->state;
  current.reset();
  try {
    auto ranges = detail::writableRanges(readBinaryFile(library));
    if (!ranges) return nullptr;  // the child's load reports what is wrong with the file
    current.emplace(Current{key, library, detail::ModuleState(std::move(*ranges))});
  } catch (const std::exception&) {
    return nullptr;
  }
  return &current->state;
}

sandbox::Message serve(sandbox::Message& request, const sandbox::SharedPayload* sharedPayload) {
  sandbox::Message reply;
  // A region in the shared payload is already a shared mapping: the child runs on it in place.
  const bool inPlace = !request.shared.empty();
  const std::size_t regionBytes = request.bytes().size();
  auto* region = inPlace ? request.shared.data()
                         : static_cast<std::byte*>(
                               ::mmap(nullptr, std::max<std::size_t>(regionBytes, 1), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  auto* status = static_cast<ChildStatus*>(::mmap(nullptr, sizeof(ChildStatus), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (region == MAP_FAILED || status == MAP_FAILED) {
    reply.header = {{"status", trialStatusName(TrialRun::Status::harnessError)},
                    {"message", std::string("worker cannot map memory: ") + std::strerror(errno)}};
    return reply;
  }
  if (!inPlace) std::memcpy(region, request.payload.data(), regionBytes);
  std::memset(static_cast<void*>(status), 0, sizeof(ChildStatus));

  const auto timeout = std::chrono::milliseconds(request.header.at("timeout_ms").get<long long>());
  std::span<std::byte> spare;
  if (inPlace && sharedPayload) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t used = (regionBytes + page - 1) / page * page;
    if (sharedPayload->mappedBytes() > used) spare = {region + used, sharedPayload->mappedBytes() - used};
  }
  detail::ModuleState* state = moduleStateFor(request.header);
  const pid_t pid = ::fork();
  if (pid == 0) childMain(request.header, region, spare, status, state);
  int wstatus = 0;
  if (pid < 0) {
    reply.header = {{"status", trialStatusName(TrialRun::Status::harnessError)}, {"message", std::string("fork failed: ") + std::strerror(errno)}};
  } else {
    detail::SlowWatch watch(request.header, timeout);
    const detail::SlowWatch::Outcome watched = watch.wait(pid, status->blocksDone, wstatus);
    const int kind = status->kind.load();
    std::string message(status->message);
    if (watched == detail::SlowWatch::Outcome::timeout) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::timeout)},
                      {"message", "the kernel ran past the time limit of " + std::to_string(timeout.count()) + " ms"}};
    } else if (watched == detail::SlowWatch::Outcome::tooSlow) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::tooSlow)}, {"message", watch.tooSlowMessage(status->blocksDone)}};
    } else if (kind == ChildStatus::violation || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGSYS)) {
      const int nr = status->syscall.load();
      char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
      reply.header = {{"status", trialStatusName(TrialRun::Status::sandboxViolation)},
                      {"message", "the kernel made a forbidden system call: " + std::string(name ? name : "?") + " (" + std::to_string(nr) + ")"}};
      std::free(name);
    } else if (WIFSIGNALED(wstatus)) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::runtimeError)},
                      {"message", "the kernel crashed with " + signalDescription(WTERMSIG(wstatus))}};
    } else if (kind == ChildStatus::ok) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::ok)}, {"kernel_ms", status->kernelMs}};
    } else if (kind == ChildStatus::runtimeError) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::runtimeError)}, {"message", message}};
    } else if (kind == ChildStatus::invalidSubmission) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::invalidSubmission)}, {"message", message}};
    } else if (kind == ChildStatus::setupError) {
      reply.header = {{"status", trialStatusName(TrialRun::Status::harnessError)}, {"message", message}};
    } else {
      reply.header = {{"status", trialStatusName(TrialRun::Status::runtimeError)},
                      {"message", "the kernel ended the process (exit status " + std::to_string(WEXITSTATUS(wstatus)) + ") before finishing"}};
    }
  }
  if (inPlace) {
    reply.shared = request.shared;
  } else {
    reply.payload.assign(region, region + regionBytes);
    ::munmap(region, std::max<std::size_t>(regionBytes, 1));
  }
  ::munmap(status, sizeof(ChildStatus));
  return reply;
}

void setLimit(int resource, rlim_t value) {
  rlimit limit{value, value};
  ::setrlimit(resource, &limit);
}

}  // namespace

std::string sandboxFileSystemIsolation() {
  const int abi = detail::landlockAbi();
  if (abi == 0) {
    return "none: Landlock is unavailable here, so a kernel library's loader may read other files (seccomp still forbids writing, and "
           "every file access once the kernel runs)";
  }
  return fmt::format("Landlock ABI {}: the sandboxed child can read only its kernel library and write nowhere{}", abi,
                     abi >= 6 ? "; it cannot signal or connect outside itself" : "");
}

int runSandboxWorker(std::size_t memoryBytes, std::optional<int> payloadFd) {
  ::signal(SIGPIPE, SIG_IGN);
  setLimit(RLIMIT_CORE, 0);
  setLimit(RLIMIT_FSIZE, 0);
#if defined(__SANITIZE_ADDRESS__)
  (void)memoryBytes;  // AddressSanitizer reserves terabytes of shadow address space: no RLIMIT_AS under it
#else
  setLimit(RLIMIT_AS, memoryBytes);
#endif
  std::optional<sandbox::SharedPayload> shared;
  try {
    if (payloadFd) shared = sandbox::SharedPayload::adopt(*payloadFd);
  } catch (const std::exception&) {
    return 2;
  }
  sandbox::SharedPayload* channel = shared ? &*shared : nullptr;
  return sandbox::serveMessages([&](sandbox::Message& request) { return serve(request, channel); }, channel);
}

// What the kernel offers (cuset doctor): asked in forked children, the caller unchanged.
namespace {

// Runs `attempt` in a forked child; returns 0 when it succeeded there, else the errno it reported.
template <typename Attempt>
int inChild(Attempt attempt) {
  const pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) ::_exit(attempt());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return EPERM;
  return WEXITSTATUS(status);
}

}  // namespace

SandboxSupport probeSandboxSupport() {
  SandboxSupport s;
  const int seccompError = inChild([] {
    const detail::SeccompContext filter(seccomp_init(SCMP_ACT_ALLOW));
    if (!filter) return ENOMEM;
    const int rc = seccomp_load(filter.get());
    return rc == 0 ? 0 : -rc;
  });
  s.seccomp = seccompError == 0;
  if (!s.seccomp) s.seccompWhy = std::string("installing a filter failed: ") + std::strerror(seccompError);
  s.landlockAbi = detail::landlockAbi();
  const int namespaceError = inChild([] { return ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno; });
  s.userNamespaces = namespaceError == 0;
  if (!s.userNamespaces) s.userNamespacesWhy = std::string("unshare(CLONE_NEWUSER) failed: ") + std::strerror(namespaceError);
  return s;
}

}  // namespace cuset
