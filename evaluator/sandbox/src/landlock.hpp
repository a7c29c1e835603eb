#pragma once
// Landlock (Linux 5.13+), for the sandboxed child: after it, the process (and every thread and process
// it starts later) can open only the files named, for reading, and write, create or remove nothing
// anywhere; where the kernel's Landlock ABI allows, it also cannot use TCP (ABI 4) or signal and reach
// abstract sockets outside itself (ABI 6). Unprivileged, inherited, irreversible. Private to the
// sandbox.
#include <filesystem>
#include <string>
#include <vector>

namespace cuset::detail {

// The kernel's Landlock ABI version, 0 when Landlock is absent or disabled.
int landlockAbi();

// Restricts the calling thread (call it before starting threads). Returns an empty string when the
// restriction is in force, else why not (no Landlock here, a file that cannot be opened).
std::string restrictToReading(const std::vector<std::filesystem::path>& readableFiles);

// A ruleset made by a parent and enforced by its forked child, which after fork may only make system
// calls: the child may read and execute beneath `readableTrees`, write only the files
// `writableFiles` (/dev/null), and, where the ABI allows, use no TCP. fd() < 0 when Landlock is absent
// (why() says so); the child then runs without it.
class LandlockRuleset {
 public:
  // writableTrees: folders beneath which files and folders may be made, written and removed (a
  // helper's private scratch folder).
  LandlockRuleset(const std::vector<std::filesystem::path>& readableTrees, const std::vector<std::filesystem::path>& writableFiles,
                  const std::vector<std::filesystem::path>& writableTrees = {});
  ~LandlockRuleset();
  LandlockRuleset(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(const LandlockRuleset&) = delete;
  int fd() const { return fd_; }
  const std::string& why() const { return why_; }

 private:
  int fd_ = -1;
  std::string why_;
};

// In the forked child: no new privileges, then the ruleset. Only system calls; returns 0 or an errno.
int enforceLandlock(int rulesetFd);

}  // namespace cuset::detail
