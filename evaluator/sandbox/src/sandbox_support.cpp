#include "cuset/evaluator/sandbox/sandbox_support.hpp"

#include <sched.h>
#include <seccomp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "landlock.hpp"

namespace cuset {
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
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (filter == nullptr) return ENOMEM;
    const int rc = seccomp_load(filter);
    seccomp_release(filter);
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
