#pragma once
// What this kernel offers the sandbox (DESIGN §4 "Sandbox"), asked without changing the calling
// process: `cuset doctor` reports it, so a user learns before a run which protections are in force.
#include <string>

namespace cuset {

struct SandboxSupport {
  bool seccomp = false;           // seccomp filters can be installed (the sim workers' allow-list)
  std::string seccompWhy;         // why not, when not
  int landlockAbi = 0;            // 0: no Landlock (restricted helpers then run without file-system rules)
  bool userNamespaces = false;    // an unprivileged process may make a user namespace
  std::string userNamespacesWhy;  // why not, when not
};

// Forks short-lived children to try what cannot be asked (a filter, a namespace); never throws.
SandboxSupport probeSandboxSupport();

}  // namespace cuset
