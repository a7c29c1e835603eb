#pragma once
namespace cuset {
// Short git revision of the source tree at build time ("-dirty" when it had local changes).
const char* gitRevision();
inline constexpr const char* kVersion = "0.1.0";
}  // namespace cuset
