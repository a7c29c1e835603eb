#include "landlock.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace cuset::detail {
namespace {

// The ruleset attribute of the newest ABI this code knows; older kernels get a prefix of it (the
// struct only ever grew at the end). Defined here because Debian's headers stop at ABI 2.
struct RulesetAttr {
  std::uint64_t handledAccessFs;
  std::uint64_t handledAccessNet;  // ABI 4
  std::uint64_t scoped;            // ABI 6
};

constexpr std::uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;   // ABI 4
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

namespace {

// A ruleset handling every file-system right (and TCP, scopes where the ABI has them), with one rule
// per path: `rights` beneath it. Returns the ruleset's descriptor, or -1 with `problem` set.
int makeRuleset(const std::vector<std::pair<std::filesystem::path, std::uint64_t>>& rules, std::string& problem) {
  const int abi = landlockAbi();
  if (abi == 0) {
    problem = "Landlock is not available in this kernel";
    return -1;
  }
  RulesetAttr attr{fileSystemRights(abi), abi >= 4 ? kNetBindTcp | kNetConnectTcp : 0, abi >= 6 ? kScopeAbstractUnixSocket | kScopeSignal : 0};
  const std::size_t size = abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 2 * sizeof(std::uint64_t) : sizeof(std::uint64_t);
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    problem = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return -1;
  }
  for (const auto& [path, rights] : rules) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      problem = "cannot open " + path.string() + ": " + std::strerror(errno);
      break;
    }
    landlock_path_beneath_attr rule{};
    // A file takes only the rights that apply to files.
    rule.allowed_access = std::filesystem::is_directory(path)
                              ? rights
                              : rights & (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | kFsTruncate);
    rule.allowed_access &= fileSystemRights(abi);
    rule.parent_fd = fd;
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
      problem = std::string("landlock_add_rule: ") + std::strerror(errno);
    ::close(fd);
    if (!problem.empty()) break;
  }
  if (!problem.empty()) {
    ::close(ruleset);
    return -1;
  }
  return ruleset;
}

}  // namespace

std::string restrictToReading(const std::vector<std::filesystem::path>& readableFiles) {
  std::vector<std::pair<std::filesystem::path, std::uint64_t>> rules;
  for (const auto& f : readableFiles) rules.emplace_back(f, LANDLOCK_ACCESS_FS_READ_FILE);
  std::string problem;
  const int ruleset = makeRuleset(rules, problem);
  if (ruleset < 0) return problem;
  if (const int e = enforceLandlock(ruleset); e != 0) problem = std::string("landlock_restrict_self: ") + std::strerror(e);
  ::close(ruleset);
  return problem;
}

LandlockRuleset::LandlockRuleset(const std::vector<std::filesystem::path>& readableTrees, const std::vector<std::filesystem::path>& writableFiles,
                                 const std::vector<std::filesystem::path>& writableTrees) {
  std::vector<std::pair<std::filesystem::path, std::uint64_t>> rules;
  const std::uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE;
  for (const auto& t : readableTrees) {
    if (std::filesystem::exists(t)) rules.emplace_back(t, read);
  }
  for (const auto& f : writableFiles) rules.emplace_back(f, LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE);
  // Files and folders made, written and removed; no devices, sockets, pipes or links.
  const std::uint64_t scratch = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR |
                                LANDLOCK_ACCESS_FS_MAKE_REG | kFsTruncate;
  for (const auto& t : writableTrees) rules.emplace_back(t, scratch);
  fd_ = makeRuleset(rules, why_);
}

LandlockRuleset::~LandlockRuleset() {
  if (fd_ >= 0) ::close(fd_);
}

int enforceLandlock(int rulesetFd) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_landlock_restrict_self, rulesetFd, 0) != 0) return errno;
  return 0;
}

}  // namespace cuset::detail
