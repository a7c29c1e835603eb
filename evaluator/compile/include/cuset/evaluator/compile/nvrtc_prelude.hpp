#pragma once
// The compatibility layer every candidate is compiled with (DESIGN §3): a pre-included header with
// INFINITY/NAN, fp16/bf16 types and fixed-width integers, plus small stand-ins for host C/C++ headers
// that LLM-written kernels commonly include but NVRTC does not ship (<cstdint>, <cmath>, <cfloat>, ...).
#include <string_view>
#include <vector>

namespace cuset {

struct VirtualHeader {
  std::string_view name;
  std::string_view content;
};

inline constexpr std::string_view kPreludeHeaderName = "cuset_prelude.cuh";

// The prelude first, then the stand-in headers.
const std::vector<VirtualHeader>& nvrtcVirtualHeaders();

// cuda_fp16.h and cuda_bf16.h are a third of NVRTC's time on a small kernel, so the prelude includes
// them only when the source can use them: when it mentions "half", "bfloat16", "bf16" or an "__h"
// intrinsic (a false positive costs ~10 ms, a false negative cannot happen for code that names the
// types). The compiler then defines CUSET_NEEDS_HALF_TYPES.
bool sourceNeedsHalfTypes(std::string_view source);

// Changes whenever any virtual header changes, so compile-cache keys do too.
std::string_view nvrtcPreludeVersion();

}  // namespace cuset
