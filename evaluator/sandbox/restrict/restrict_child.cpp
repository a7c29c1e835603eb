// The restriction a warm helper's child applies to itself before it runs candidate code: the Python
// fork server of the KernelBench recorder (kernelbench_solution.py `serve`) loads this library and
// calls it in each forked child, so that a child gets exactly what runRestricted gives a process it
// starts (restricted_process.cpp): the same Landlock ruleset, file-size, core and address-space limits,
// and its scratch folder as working directory. A C interface, for ctypes.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "landlock.hpp"

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
