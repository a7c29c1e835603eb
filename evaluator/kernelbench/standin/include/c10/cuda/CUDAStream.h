#pragma once
// Stand-in for torch's c10/cuda/CUDAStream.h (and c10/cuda/CUDAFunctions.h, which it includes): the
// stream host code launches on is the default one, the only one a recorded plan has; a stream from the
// pool is `unsupported` (host_shim.cpp).
#include "c10/cuda/CUDAException.h"

namespace c10::cuda {
struct CUDAStream {
  cudaStream_t stream() const { return nullptr; }
  operator cudaStream_t() const { return nullptr; }
  int device_index() const { return 0; }
};
inline CUDAStream getCurrentCUDAStream(int = -1) { return {}; }
inline CUDAStream getDefaultCUDAStream(int = -1) { return {}; }
CUDAStream getStreamFromPool(bool = false, int = -1);
inline int current_device() { return 0; }
inline int device_count() { return 1; }
inline void device_synchronize() {}
}  // namespace c10::cuda
