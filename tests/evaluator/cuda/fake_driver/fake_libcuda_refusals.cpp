// Driver entry points the fake does not serve, exported under their names so that a library looking
// them up in whatever libcuda.so.1 the process has gets a function that refuses, never a null pointer.
// The fake itself is reached through cuGetProcAddress_v2 (as CudaDriver reaches a real driver); these
// exist for the other libraries of a process where the fake is installed as libcuda.so.1:
//  - NVRTC 13 loads libcuda.so.1 for its compute cache and calls cuInit and cuGetExportTable, even
//    with CUDA_CACHE_DISABLE=1; with cuGetExportTable missing it dereferenced a null table inside
//    nvrtcCompileProgram (SIGSEGV; test_cuda_fake_driver_as_libcuda). A refusal turns its cache off.
//  - cuBLASLt (loaded with LibTorch's CUDA) looks up these at load time, and the CUDA runtime asks the
//    driver through cuGetProcAddress_v2, which answers CUDA_ERROR_NOT_FOUND for what the fake lacks.
// No cuda.h here: each export takes the signature of the one refusal it aliases (a C call passes its
// arguments in registers the callee may ignore, and the result in eax).
namespace {
constexpr int kCudaErrorNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED
}

extern "C" {

int cuset_fake_driver_refuses() { return kCudaErrorNotSupported; }

#define CUSET_FAKE_REFUSES(name) int name() __attribute__((alias("cuset_fake_driver_refuses"), visibility("default")));
// NVRTC's compute cache.
CUSET_FAKE_REFUSES(cuGetExportTable)
// What cuBLASLt looks up when it loads (LD_DEBUG=symbols shows the list), and what the fake serves
// through cuGetProcAddress_v2 only.
CUSET_FAKE_REFUSES(cuDriverGetVersion)
CUSET_FAKE_REFUSES(cuGetErrorName)
CUSET_FAKE_REFUSES(cuGetErrorString)
CUSET_FAKE_REFUSES(cuDeviceGet)
CUSET_FAKE_REFUSES(cuDeviceGetAttribute)
CUSET_FAKE_REFUSES(cuDevicePrimaryCtxRetain)
CUSET_FAKE_REFUSES(cuDevicePrimaryCtxRelease)
CUSET_FAKE_REFUSES(cuDevicePrimaryCtxReset)
CUSET_FAKE_REFUSES(cuCtxGetDevice)
CUSET_FAKE_REFUSES(cuCtxGetLimit)
CUSET_FAKE_REFUSES(cuCtxPushCurrent)
CUSET_FAKE_REFUSES(cuCtxPopCurrent)
CUSET_FAKE_REFUSES(cuFuncGetAttribute)
CUSET_FAKE_REFUSES(cuFuncSetAttribute)
CUSET_FAKE_REFUSES(cuLaunchKernel)
CUSET_FAKE_REFUSES(cuLaunchKernelEx)
CUSET_FAKE_REFUSES(cuLinkCreate_v2)
CUSET_FAKE_REFUSES(cuLinkAddData_v2)
CUSET_FAKE_REFUSES(cuLinkAddFile_v2)
CUSET_FAKE_REFUSES(cuLinkComplete)
CUSET_FAKE_REFUSES(cuLinkDestroy)
CUSET_FAKE_REFUSES(cuMemcpyDtoH_v2)
CUSET_FAKE_REFUSES(cuModuleGetFunction)
CUSET_FAKE_REFUSES(cuModuleGetGlobal_v2)
CUSET_FAKE_REFUSES(cuModuleLoadData)
CUSET_FAKE_REFUSES(cuModuleLoadDataEx)
CUSET_FAKE_REFUSES(cuModuleLoadFatBinary)
CUSET_FAKE_REFUSES(cuModuleUnload)
CUSET_FAKE_REFUSES(cuOccupancyMaxActiveBlocksPerMultiprocessor)
CUSET_FAKE_REFUSES(cuStreamSynchronize)
CUSET_FAKE_REFUSES(cuTensorMapEncodeTiled)
#undef CUSET_FAKE_REFUSES

}  // extern "C"
