#pragma once
// The recorder's stand-in for <cuda_runtime.h>, which nvcc includes in every .cu file: the toolkit's
// C API declarations (types, error codes, every function) plus the C++ overloads host code uses.
// host_shim.cpp defines the calls a recording can express (error checks, synchronisation, device
// properties of the H100 target the plan is recorded for); the rest stay undefined, so a build that
// uses one (cudaMalloc, streams) does not load, and the recorder says which call it was.
#include <cuda_runtime_api.h>

#include "cuset_kb/cuda_types.hpp"

template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return cudaMemcpyToSymbol(static_cast<const void*>(&symbol), src, bytes, offset, kind);
}
template <class F>
cudaError_t cudaFuncSetAttribute(F* function, cudaFuncAttribute attribute, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(function), attribute, value);
}
template <class F>
cudaError_t cudaFuncSetCacheConfig(F* function, cudaFuncCache config) {
  return cudaFuncSetCacheConfig(reinterpret_cast<const void*>(function), config);
}
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, F* function, int blockSize, std::size_t dynamicShared) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(function), blockSize, dynamicShared);
}
