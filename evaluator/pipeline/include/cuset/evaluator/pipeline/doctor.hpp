#pragma once
// `cuset doctor`: what this binary was built with and what this machine lets it do, in one report a new
// user reads first. Each check says ok or not, why not, and the command that fixes it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuset {

struct DoctorCheck {
  std::string section;  // "build", "backends", "sandbox", "python"
  std::string name;     // "libtorch", "sim", "seccomp", ...
  bool ok = false;
  bool required = false;  // the defaults (sim backend, sandbox, Python helpers) need it
  std::string detail;     // what was found, or why not
  std::string fix;        // the command or step that fixes it; empty when ok or when nothing can
};

struct DoctorReport {
  std::vector<DoctorCheck> checks;
  bool ok() const;  // every required check passed
  nlohmann::json toJson() const;
};

// Asks everything once (the driver, NVRTC, the sim toolchain, the kernel's sandbox features, the
// project's Python). Never throws for a missing part: that is a failed check.
DoctorReport runDoctor();

// The report as aligned text lines, a summary line last.
std::string renderDoctor(const DoctorReport& report);

}  // namespace cuset
