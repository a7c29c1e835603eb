#pragma once
// The simulator prelude as a GCC precompiled header, shared by every candidate build of a toolchain.
// Parsing the prelude (cuda_fp16.h, <cmath>, <algorithm>, the runtime) is most of a candidate's host
// build; loading it precompiled makes a trivial kernel's build ~4x faster (docs/benchmarks.md).
//
// GCC validates a .gch against the compiler and the flags when it loads one (and silently falls back to
// the header when they differ) but not against the headers it was made from, so the cache key is the
// compiler's identity, the flags and the content of every header the prelude pulls in.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/compile/sim_compiler.hpp"

namespace cuset::detail {

struct PreludePch {
  std::filesystem::path includeDir;  // put first on the include path: holds cuset_sim/prelude.hpp.gch
  std::string key;
};

// Finds or builds the precompiled prelude under `root`/<key>/ for `flags` (the candidate build's code
// generation flags, which the .gch must share). Safe under concurrent builders, in one process or
// many: one builds under a lock, the others wait and reuse it. nullopt, with `whyNot`, when it cannot
// be built: candidates then compile the prelude from source, only slower.
std::optional<PreludePch> ensurePreludePch(const SimToolchain& toolchain, const std::vector<std::string>& flags, const std::filesystem::path& root,
                                           std::chrono::milliseconds timeout, std::string& whyNot);

}  // namespace cuset::detail
