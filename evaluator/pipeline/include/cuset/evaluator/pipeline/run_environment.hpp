#pragma once
// What a run records about where it ran (DESIGN §6): versions of CuSeT, NVRTC, CUDA and LibTorch,
// host, OS and compiler, so results can be compared and reproduced.
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace cuset {

nlohmann::json describeEnvironment();
std::string utcTimestamp();  // 2026-11-29T16:24:40Z

}  // namespace cuset
