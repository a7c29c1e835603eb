#pragma once
// What a run records about where it ran (DESIGN §6): versions of CuSeT, NVRTC, CUDA and LibTorch,
// host, OS and compiler, so results can be compared and reproduced.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "cuset/common/file_util.hpp"  // utcTimestamp

namespace cuset {

nlohmann::json describeEnvironment();

}  // namespace cuset
