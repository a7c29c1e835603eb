// The restrictions a Python helper applies to itself before it runs candidate code, so that the
// project has one implementation of each (the C++ one), called through ctypes:
//   cuset_restrict_self      in each child the recorder's fork server (`cuset_kernelbench.py serve`)
//                            forks: exactly what runRestricted gives a process it starts
//                            (restricted_process.cpp): the same Landlock ruleset, file-size, core and
//                            address-space limits, and its scratch folder as working directory;
//   cuset_restrict_syscalls  in every recording, once its own imports are done and before the
//                            solution's code runs: the seccomp filter below.
#include <sched.h>
#include <seccomp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "landlock.hpp"
#include "seccomp_context.hpp"

namespace {

void copyWhy(const std::string& text, char* why, unsigned long whyBytes) {
  if (!why || whyBytes == 0) return;
  std::strncpy(why, text.c_str(), whyBytes - 1);
  why[whyBytes - 1] = '\0';
}

}  // namespace

// readable: trees separated by '\n'; scratch: the one writable folder (empty: none). Returns 0 when the
// limits are set and Landlock enforced, 1 when they are set and this kernel has no Landlock (why says
// so: runRestricted runs such a helper too), 2 when enforcing failed (the child must not run).
extern "C" __attribute__((visibility("default"))) int cuset_restrict_self(const char* readable, const char* scratch, unsigned long long memoryBytes,
                                                                          unsigned long long scratchFileBytes, char* why, unsigned long whyBytes) {
  std::vector<std::filesystem::path> trees;
  std::istringstream lines(readable ? readable : "");
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) trees.emplace_back(line);
  }
  std::vector<std::filesystem::path> scratchTrees;
  if (scratch && *scratch) scratchTrees.emplace_back(scratch);
  int status = 0;
  {
    const cuset::detail::LandlockRuleset ruleset(trees, {"/dev/null"}, scratchTrees);
    if (ruleset.fd() < 0) {
      copyWhy(ruleset.why(), why, whyBytes);
      status = 1;
    } else if (const int e = cuset::detail::enforceLandlock(ruleset.fd()); e != 0) {
      copyWhy(std::string("landlock_restrict_self: ") + std::strerror(e), why, whyBytes);
      return 2;
    }
  }
  const rlim_t files = scratchTrees.empty() ? 0 : scratchFileBytes;
  rlimit fileLimit{files, files}, none{0, 0}, memory{memoryBytes, memoryBytes};
  ::setrlimit(RLIMIT_FSIZE, &fileLimit);
  ::setrlimit(RLIMIT_CORE, &none);
#if !defined(__SANITIZE_ADDRESS__)
  ::setrlimit(RLIMIT_AS, &memory);
#endif
  if (!scratchTrees.empty() && ::chdir(scratch) != 0) {
    copyWhy(std::string("cannot enter the scratch folder: ") + std::strerror(errno), why, whyBytes);
    return 2;
  }
  return status;
}

namespace {

// Kills the process (a sandbox violation the recorder's parent reports from the signal) on what no
// recording needs and an escape would: networking, new processes (a thread is allowed: torch starts
// them), program execution, tracing or signalling another process, mounts and namespaces, kernel
// modules, BPF, perf, keyrings, io_uring and file handles. clone3 passes its flags in memory, which a
// filter cannot read: it answers ENOSYS, and glibc falls back to clone, whose flags it can.
int installEscapeFilter(std::string& why) {
  const cuset::detail::SeccompContext context(seccomp_init(SCMP_ACT_ALLOW));
  if (!context) {
    why = "seccomp_init failed";
    return ENOMEM;
  }
  scmp_filter_ctx filter = context.get();
  int rc = 0;
  // A call this architecture does not have is left out; a rule libseccomp refuses fails the whole filter.
  auto rule = [&](std::uint32_t action, const char* name, std::initializer_list<scmp_arg_cmp> compare) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (rc != 0 || nr < 0) return;
    rc = seccomp_rule_add_array(filter, action, nr, static_cast<unsigned>(compare.size()), compare.begin());
    if (rc != 0) why = std::string("seccomp rule for ") + name + ": " + std::strerror(-rc);
  };
  for (const char* name : {"socket",
                           "socketpair",
                           "connect",
                           "bind",
                           "listen",
                           "accept",
                           "accept4",
                           "fork",
                           "vfork",
                           "execve",
                           "execveat",
                           "ptrace",
                           "process_vm_readv",
                           "process_vm_writev",
                           "mount",
                           "umount2",
                           "pivot_root",
                           "chroot",
                           "unshare",
                           "setns",
                           "init_module",
                           "finit_module",
                           "delete_module",
                           "kexec_load",
                           "reboot",
                           "swapon",
                           "swapoff",
                           "bpf",
                           "perf_event_open",
                           "keyctl",
                           "add_key",
                           "request_key",
                           "userfaultfd",
                           "io_uring_setup",
                           "open_by_handle_at",
                           "name_to_handle_at",
                           "personality"}) {
    rule(SCMP_ACT_KILL_PROCESS, name, {});
  }
  rule(SCMP_ACT_KILL_PROCESS, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
  rule(SCMP_ACT_ERRNO(ENOSYS), "clone3", {});
  const auto self = static_cast<scmp_datum_t>(::getpid());
  rule(SCMP_ACT_KILL_PROCESS, "kill", {SCMP_A0(SCMP_CMP_NE, self)});
  rule(SCMP_ACT_KILL_PROCESS, "tgkill", {SCMP_A0(SCMP_CMP_NE, self)});
  if (rc == 0) {
    rc = seccomp_load(filter);
    if (rc != 0) why = std::string("seccomp_load: ") + std::strerror(-rc);
  }
  return rc;
}

}  // namespace

// Returns 0 when the filter is installed, else an error (why says which) and the caller must not run
// the solution.
extern "C" __attribute__((visibility("default"))) int cuset_restrict_syscalls(char* why, unsigned long whyBytes) {
  std::string reason;
  const int rc = installEscapeFilter(reason);
  if (rc != 0) copyWhy(reason, why, whyBytes);
  return rc == 0 ? 0 : 1;
}
