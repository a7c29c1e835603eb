#pragma once
// The CUDA driver, loaded lazily: `libcuda.so.1` is opened with dlopen and every entry point is
// resolved through cuGetProcAddress with the signatures of <cudaTypedefs.h>. Nothing links the
// driver, so `cuset` starts, compiles and simulates on machines without one; only the cuda backend's
// run stage needs it, and there a missing library, the toolkit's stub, an old driver or no device
// each give one line saying what is wrong and what to do.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <memory>
#include <string>

#include "cuset/common/expected.hpp"

namespace cuset {

// Oldest driver API the backend asks for: entry points are resolved with CUDA 12.0 signatures.
inline constexpr int kCudaDriverApiVersion = 12000;

#define CUSET_CUDA_DRIVER_FUNCTIONS(X)                                   \
  X(cuGetErrorName, PFN_cuGetErrorName_v6000)                            \
  X(cuGetErrorString, PFN_cuGetErrorString_v6000)                        \
  X(cuInit, PFN_cuInit_v2000)                                            \
  X(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020)                    \
  X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000)                        \
  X(cuDeviceGet, PFN_cuDeviceGet_v2000)                                  \
  X(cuDeviceGetName, PFN_cuDeviceGetName_v2000)                          \
  X(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)                \
  X(cuDeviceTotalMem, PFN_cuDeviceTotalMem_v3020)                        \
  X(cuDeviceGetPCIBusId, PFN_cuDeviceGetPCIBusId_v4010)                  \
  X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000)        \
  X(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000)     \
  X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000)                          \
  X(cuCtxSynchronize, PFN_cuCtxSynchronize_v2000)                        \
  X(cuCtxResetPersistingL2Cache, PFN_cuCtxResetPersistingL2Cache_v11000) \
  X(cuModuleLoadDataEx, PFN_cuModuleLoadDataEx_v2010)                    \
  X(cuModuleUnload, PFN_cuModuleUnload_v2000)                            \
  X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000)                  \
  X(cuFuncGetAttribute, PFN_cuFuncGetAttribute_v2020)                    \
  X(cuFuncSetAttribute, PFN_cuFuncSetAttribute_v9000)                    \
  X(cuLaunchKernel, PFN_cuLaunchKernel_v4000)                            \
  X(cuMemAlloc, PFN_cuMemAlloc_v3020)                                    \
  X(cuMemFree, PFN_cuMemFree_v3020)                                      \
  X(cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020)                                \
  X(cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020)                                \
  X(cuMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v3020)                      \
  X(cuMemsetD8, PFN_cuMemsetD8_v3020)                                    \
  X(cuMemsetD8Async, PFN_cuMemsetD8Async_v3020)                          \
  X(cuStreamCreate, PFN_cuStreamCreate_v2000)                            \
  X(cuStreamDestroy, PFN_cuStreamDestroy_v4000)                          \
  X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000)                  \
  X(cuEventCreate, PFN_cuEventCreate_v2000)                              \
  X(cuEventRecord, PFN_cuEventRecord_v2000)                              \
  X(cuEventSynchronize, PFN_cuEventSynchronize_v2000)                    \
  X(cuEventElapsedTime, PFN_cuEventElapsedTime_v2000)                    \
  X(cuEventDestroy, PFN_cuEventDestroy_v4000)

class CudaDriver {
  struct Key {
    explicit Key() = default;
  };

 public:
  explicit CudaDriver(Key) {}  // only get() makes one

  // The process-wide driver, loaded and initialised (cuInit) on first use. The error says which of
  // libcuda.so.1 missing / stub / too old / no device it is. $CUSET_LIBCUDA overrides the library path.
  static Expected<const CudaDriver*> get();

#define CUSET_DECLARE_CUDA_FUNCTION(name, type) type name = nullptr;
  CUSET_CUDA_DRIVER_FUNCTIONS(CUSET_DECLARE_CUDA_FUNCTION)
#undef CUSET_DECLARE_CUDA_FUNCTION

  int version() const { return version_; }  // e.g. 12080
  const std::string& libraryPath() const { return libraryPath_; }

  // "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
  std::string describe(CUresult result) const;
  // Throws cuset::Error "<what>: <describe(result)>" unless result is CUDA_SUCCESS.
  void check(CUresult result, const char* what) const;

  // Errors after which the context is unusable (an illegal address, a trap, a launch failure): the
  // process that saw one must end.
  static bool isSticky(CUresult result);

  // Whether LibTorch's CUDA can work on this backend's device memory: LibTorch has CUDA and the
  // backend's driver is the process's own libcuda.so.1, the one LibTorch uses. Not under a
  // $CUSET_LIBCUDA override (the fake driver): its "device" memory is host memory, and a library step
  // or a reference timed with LibTorch would run on another driver's GPU (issue #62).
  static bool sharedWithLibTorch();

 private:
  static Expected<std::unique_ptr<CudaDriver>> load();
  int version_ = 0;
  std::string libraryPath_;
};

}  // namespace cuset
