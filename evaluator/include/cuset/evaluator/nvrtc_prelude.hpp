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

// Changes whenever any virtual header changes, so compile-cache keys do too.
std::string_view nvrtcPreludeVersion();

}  // namespace cuset
