#pragma once
// Stand-in for torch's ATen/cuda/CUDAContext.h (with CUDAContextLight.h): the device's properties (the
// H100 a plan is recorded for, host_shim.cpp), the exceptions and the stream headers it includes.
// Not the guards: the real header does not include c10/cuda/CUDAGuard.h.
#include "ATen/cuda/Exceptions.h"
#include "c10/cuda/CUDAStream.h"

namespace at::cuda {
inline cudaDeviceProp* getCurrentDeviceProperties() {
  static cudaDeviceProp prop = [] {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    return p;
  }();
  return &prop;
}
inline cudaDeviceProp* getDeviceProperties(int) { return getCurrentDeviceProperties(); }
inline int warp_size() { return 32; }
inline std::int64_t getNumGPUs() { return 1; }
inline bool is_available() { return true; }
}  // namespace at::cuda
