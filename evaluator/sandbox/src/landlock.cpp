#include "landlock.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace cuset::detail {
namespace {

// The ruleset attribute of the newest ABI this code knows; older kernels get a prefix of it (the
// struct only ever grew at the end). Defined here because Debian's headers stop at ABI 2.
struct RulesetAttr {
  std::uint64_t handledAccessFs;
  std::uint64_t handledAccessNet;  // ABI 4
  std::uint64_t scoped;            // ABI 6
};

constexpr std::uint64_t kFsTruncate = 1ULL << 14;   // ABI 3
constexpr std::uint64_t kFsIoctlDev = 1ULL << 15;   // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;    // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

std::uint64_t fileSystemRights(int abi) {
  std::uint64_t rights = (1ULL << 13) - 1;  // ABI 1: EXECUTE .. MAKE_SYM
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= kFsTruncate;
  if (abi >= 5) rights |= kFsIoctlDev;
  return rights;
}

}  // namespace

int landlockAbi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

std::string restrictToReading(const std::vector<std::filesystem::path>& readableFiles) {
  const int abi = landlockAbi();
  if (abi == 0) return "Landlock is not available in this kernel";
  RulesetAttr attr{fileSystemRights(abi), abi >= 4 ? kNetBindTcp | kNetConnectTcp : 0,
                   abi >= 6 ? kScopeAbstractUnixSocket | kScopeSignal : 0};
  const std::size_t size = abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 2 * sizeof(std::uint64_t) : sizeof(std::uint64_t);
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return std::string("landlock_create_ruleset: ") + std::strerror(errno);
  std::string problem;
  for (const auto& file : readableFiles) {
    const int fd = ::open(file.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      problem = "cannot open " + file.string() + ": " + std::strerror(errno);
      break;
    }
    landlock_path_beneath_attr rule{};
    rule.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE;
    rule.parent_fd = fd;
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) problem = std::string("landlock_add_rule: ") + std::strerror(errno);
    ::close(fd);
    if (!problem.empty()) break;
  }
  if (problem.empty() && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) problem = std::string("no_new_privs: ") + std::strerror(errno);
  if (problem.empty() && ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) problem = std::string("landlock_restrict_self: ") + std::strerror(errno);
  ::close(ruleset);
  return problem;
}

}  // namespace cuset::detail
