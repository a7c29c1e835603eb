#pragma once
// Stand-in for torch's c10/cuda/CUDAGuard.h: device and stream guards, which have nothing to switch on
// the one device a plan is recorded for. The real header reaches CUDAStream.h through the caching
// allocator's headers.
#include "c10/cuda/CUDAStream.h"

namespace c10::cuda {
struct CUDAGuard {
  template <class... A>
  explicit CUDAGuard(const A&...) {}
};
using OptionalCUDAGuard = CUDAGuard;
struct CUDAStreamGuard {
  explicit CUDAStreamGuard(const CUDAStream&) {}
};
using OptionalCUDAStreamGuard = CUDAStreamGuard;
}  // namespace c10::cuda
