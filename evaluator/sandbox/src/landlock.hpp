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

}  // namespace cuset::detail
