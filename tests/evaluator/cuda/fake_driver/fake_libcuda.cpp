// A CUDA driver double for machines without a GPU: exports cuInit and cuGetProcAddress_v2 like
// libcuda.so.1, keeps "device" memory in host memory, and runs kernels with the CPU simulator.
// Loaded by `cuset __cuda-worker` through $CUSET_LIBCUDA, it lets the cuda backend's own code (the
// worker protocol, module loading, argument packing, region copies, sticky-error handling, the
// timing loop with events) run in CI.
//
// The NVRTC image is not executed: kernels come from the simulator library named by
// $CUSET_FAKE_CUDA_KERNELS (built by SimCompiler from the same sources), found by their names, so
// tests give each kernel a distinct extern "C" name. A simulator failure (a trap, a divergent
// barrier) is CUDA_ERROR_LAUNCH_FAILED, sticky as on a GPU; its text is cuGetErrorString's.
//
// Knobs (environment): CUSET_FAKE_CUDA_CC ("9.0"; a device newer than NVRTC knows refuses cubins,
// so the supervisor must send PTX), CUSET_FAKE_CUDA_DRIVER_VERSION (13000), CUSET_FAKE_CUDA_DEVICES
// (1; 0 makes cuInit report CUDA_ERROR_NO_DEVICE; CUDA_VISIBLE_DEVICES narrows them as on a real driver),
// CUSET_FAKE_CUDA_MAX_MODULES (no limit; more loaded
// modules than this is CUDA_ERROR_OUT_OF_MEMORY, to show that a worker unloads what it no longer uses),
// CUSET_FAKE_CUDA_TRACE (a file: one line per launch, event record, memset and persisting-L2 reset, in
// call order, so tests can see what the timing loop issues around each sample).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cuset_sim/runtime.hpp"

struct CUctx_st {};
struct CUstream_st {};
struct CUevent_st {
  std::chrono::steady_clock::time_point at;
  bool recorded = false;
};
struct CUfunc_st {
  const cuset_sim::KernelEntry* entry = nullptr;
  int maxDynamicShared = 48 * 1024;  // more only after cuFuncSetAttribute, as on a GPU
};
struct CUmod_st {
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

namespace {

constexpr std::size_t kTotalMemory = std::size_t{8} << 30;
constexpr int kSharedOptIn = 227 * 1024;

struct FakeState {
  std::mutex mutex;
  bool initialised = false;
  bool sticky = false;  // after a failed launch, as on a GPU, every call fails
  std::string lastLaunchError;
  CUctx_st context;
  void* kernels = nullptr;  // the simulator library
  std::map<CUdeviceptr, std::unique_ptr<std::byte[]>> allocations;
  std::map<CUstream_st*, std::unique_ptr<CUstream_st>> streams;
  std::map<CUevent_st*, std::unique_ptr<CUevent_st>> events;
  std::map<CUmod_st*, std::unique_ptr<CUmod_st>> modules;
};

FakeState& state() {
  static FakeState s;
  return s;
}

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// {major, minor} from CUSET_FAKE_CUDA_CC.
std::pair<int, int> computeCapability() {
  const char* v = std::getenv("CUSET_FAKE_CUDA_CC");
  int major = 9, minor = 0;
  if (v && *v) std::sscanf(v, "%d.%d", &major, &minor);
  return {major, minor};
}

// Appends one line to $CUSET_FAKE_CUDA_TRACE, if set (callers hold the state's mutex).
template <class... Args>
void trace(const char* format, Args... args) {
  static FILE* file = [] {
    const char* path = std::getenv("CUSET_FAKE_CUDA_TRACE");
    return path && *path ? std::fopen(path, "a") : nullptr;
  }();
  if (!file) return;
  if constexpr (sizeof...(args) == 0) {
    std::fputs(format, file);
  } else {
    std::fprintf(file, format, args...);
  }
  std::fputc('\n', file);
  std::fflush(file);
}

#define FAKE_GUARD()                                           \
  std::lock_guard lock(state().mutex);                         \
  if (!state().initialised) return CUDA_ERROR_NOT_INITIALIZED; \
  if (state().sticky) return CUDA_ERROR_LAUNCH_FAILED

CUresult fakeGetErrorName(CUresult error, const char** out) {
  switch (error) {
    case CUDA_SUCCESS:
      *out = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *out = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *out = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED:
      *out = "CUDA_ERROR_NOT_INITIALIZED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_HANDLE:
      *out = "CUDA_ERROR_INVALID_HANDLE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND:
      *out = "CUDA_ERROR_NOT_FOUND";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_IMAGE:
      *out = "CUDA_ERROR_INVALID_IMAGE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED:
      *out = "CUDA_ERROR_LAUNCH_FAILED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE:
      *out = "CUDA_ERROR_NO_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      *out = "CUDA_ERROR_NO_BINARY_FOR_GPU";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX:
      *out = "CUDA_ERROR_INVALID_PTX";
      return CUDA_SUCCESS;
    default:
      *out = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult fakeGetErrorString(CUresult error, const char** out) {
  if (error == CUDA_ERROR_LAUNCH_FAILED) {
    static thread_local std::string text;
    text = "unspecified launch failure (fake driver: " + state().lastLaunchError + ")";
    *out = text.c_str();
    return CUDA_SUCCESS;
  }
  return fakeGetErrorName(error, out);
}

CUresult fakeDriverGetVersion(int* version) {
  *version = envInt("CUSET_FAKE_CUDA_DRIVER_VERSION", 13000);
  return CUDA_SUCCESS;
}

// The physical ids this process sees: 0..CUSET_FAKE_CUDA_DEVICES-1, narrowed by CUDA_VISIBLE_DEVICES
// (a list of ids) as a real driver narrows them.
std::vector<int> visibleDevices() {
  const int installed = envInt("CUSET_FAKE_CUDA_DEVICES", 1);
  std::vector<int> ids;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || !*visible) {
    for (int i = 0; i < installed; ++i) ids.push_back(i);
    return ids;
  }
  for (const char* c = visible; *c;) {
    char* end = nullptr;
    const long id = std::strtol(c, &end, 10);
    if (end == c || id < 0 || id >= installed) break;  // as CUDA: the list ends at the first invalid entry
    ids.push_back(static_cast<int>(id));
    c = *end == ',' ? end + 1 : end;
    if (*end != ',') break;
  }
  return ids;
}

CUresult fakeDeviceGetCount(int* count) {
  *count = static_cast<int>(visibleDevices().size());
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= static_cast<int>(visibleDevices().size())) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

// The name carries the physical id when there is more than one device, so tests see which one ran.
CUresult fakeDeviceGetName(char* name, int length, CUdevice device) {
  const auto ids = visibleDevices();
  if (envInt("CUSET_FAKE_CUDA_DEVICES", 1) > 1 && device >= 0 && device < static_cast<int>(ids.size())) {
    std::snprintf(name, static_cast<std::size_t>(length), "CuSeT fake GPU %d (CPU simulator)", ids[static_cast<std::size_t>(device)]);
  } else {
    std::snprintf(name, static_cast<std::size_t>(length), "%s", "CuSeT fake GPU (CPU simulator)");
  }
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = computeCapability().first;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = computeCapability().second;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 4;
      break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *value = 1000000;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *value = 1000000;
      break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *value = 64;
      break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *value = 1 << 20;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = kSharedOptIn;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = 1024;
      break;
    default:
      *value = 0;
      break;
  }
  return CUDA_SUCCESS;
}

CUresult fakeDeviceTotalMem(std::size_t* bytes, CUdevice) {
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGetPCIBusId(char* id, int length, CUdevice) {
  std::snprintf(id, static_cast<std::size_t>(length), "%s", "0000:00:00.0");
  return CUDA_SUCCESS;
}

CUresult fakePrimaryCtxRetain(CUcontext* context, CUdevice) {
  FAKE_GUARD();
  *context = &state().context;
  return CUDA_SUCCESS;
}

CUresult fakePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult fakeCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult fakeCtxSynchronize() {
  FAKE_GUARD();
  return CUDA_SUCCESS;  // every call below finishes before it returns
}
CUresult fakeCtxResetPersistingL2Cache() {
  FAKE_GUARD();
  trace("reset_persisting_l2");
  return CUDA_SUCCESS;
}

CUresult fakeModuleLoadDataEx(CUmodule* module, const void* image, unsigned, CUjit_option*, void**) {
  FAKE_GUARD();
  if (image == nullptr) return CUDA_ERROR_INVALID_IMAGE;
  // A cubin carries machine code for one architecture; a GPU newer than NVRTC needs PTX to JIT.
  const bool isElf = std::memcmp(image,
                                 "\x7f"
                                 "ELF",
                                 4) == 0;
  if (isElf && computeCapability().first >= 20) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (!isElf && std::strstr(static_cast<const char*>(image), ".target") == nullptr) return CUDA_ERROR_INVALID_PTX;
  if (!state().kernels) {
    const char* path = std::getenv("CUSET_FAKE_CUDA_KERNELS");
    if (!path || !*path) return CUDA_ERROR_INVALID_IMAGE;
    state().kernels = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!state().kernels) return CUDA_ERROR_INVALID_IMAGE;
  }
  if (static_cast<int>(state().modules.size()) >= envInt("CUSET_FAKE_CUDA_MAX_MODULES", 1 << 30)) return CUDA_ERROR_OUT_OF_MEMORY;
  auto m = std::make_unique<CUmod_st>();
  *module = m.get();
  state().modules[m.get()] = std::move(m);
  return CUDA_SUCCESS;
}

CUresult fakeModuleUnload(CUmodule module) {
  std::lock_guard lock(state().mutex);
  return state().modules.erase(module) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult fakeModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  FAKE_GUARD();
  using TableFn = const cuset_sim::KernelEntry* (*)(int*);
  auto table = reinterpret_cast<TableFn>(::dlsym(state().kernels, "cuset_sim_kernels"));
  if (!table || !state().modules.count(module)) return CUDA_ERROR_INVALID_HANDLE;
  int count = 0;
  const cuset_sim::KernelEntry* entries = table(&count);
  for (int i = 0; i < count; ++i) {
    if (std::string_view(entries[i].name) == name) {
      auto& slot = module->functions[name];
      if (!slot) slot = std::make_unique<CUfunc_st>(CUfunc_st{&entries[i]});
      *function = slot.get();
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult fakeFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction) {
  *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}

CUresult fakeFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  FAKE_GUARD();
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > kSharedOptIn) return CUDA_ERROR_INVALID_VALUE;
    f->maxDynamicShared = value;
  }
  return CUDA_SUCCESS;
}

CUresult fakeLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                          CUstream stream, void** params, void** extra) {
  FAKE_GUARD();
  trace("launch %s stream=%p", f ? f->entry->name : "(null)", static_cast<void*>(stream));
  if (!f || extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (bx * by * bz > 1024 || bx * by * bz == 0) return CUDA_ERROR_INVALID_VALUE;
  if (shared > static_cast<unsigned>(f->maxDynamicShared)) return CUDA_ERROR_INVALID_VALUE;
  cuset_sim::LaunchSpec spec;
  spec.kernel = f->entry;
  spec.args = params;
  spec.grid[0] = gx, spec.grid[1] = gy, spec.grid[2] = gz;
  spec.block[0] = bx, spec.block[1] = by, spec.block[2] = bz;
  spec.dynamicSharedBytes = shared;
  const cuset_sim::LaunchOutcome outcome = cuset_sim::run_launch(spec, cuset_sim::LaunchOptions{});
  if (!outcome.ok) {
    state().lastLaunchError = outcome.error;
    state().sticky = true;
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_SUCCESS;
}

CUresult fakeMemAlloc(CUdeviceptr* ptr, std::size_t bytes) {
  FAKE_GUARD();
  if (bytes == 0 || bytes > kTotalMemory) return CUDA_ERROR_OUT_OF_MEMORY;
  auto storage = std::make_unique_for_overwrite<std::byte[]>(bytes);
  *ptr = reinterpret_cast<CUdeviceptr>(storage.get());
  state().allocations[*ptr] = std::move(storage);
  return CUDA_SUCCESS;
}

CUresult fakeMemFree(CUdeviceptr ptr) {
  std::lock_guard lock(state().mutex);
  return state().allocations.erase(ptr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fakeMemcpyHtoD(CUdeviceptr dst, const void* src, std::size_t bytes) {
  FAKE_GUARD();
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult fakeMemcpyDtoH(void* dst, CUdeviceptr src, std::size_t bytes) {
  FAKE_GUARD();
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult fakeMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream) {
  FAKE_GUARD();
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult fakeMemsetD8(CUdeviceptr dst, unsigned char value, std::size_t bytes) {
  FAKE_GUARD();
  trace("memset bytes=%zu", bytes);
  std::memset(reinterpret_cast<void*>(dst), value, bytes);
  return CUDA_SUCCESS;
}

CUresult fakeMemsetD8Async(CUdeviceptr dst, unsigned char value, std::size_t bytes, CUstream) { return fakeMemsetD8(dst, value, bytes); }

CUresult fakeStreamCreate(CUstream* stream, unsigned) {
  FAKE_GUARD();
  auto s = std::make_unique<CUstream_st>();
  *stream = s.get();
  state().streams[s.get()] = std::move(s);
  return CUDA_SUCCESS;
}

CUresult fakeStreamDestroy(CUstream stream) {
  std::lock_guard lock(state().mutex);
  return state().streams.erase(stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult fakeStreamSynchronize(CUstream) {
  FAKE_GUARD();
  return CUDA_SUCCESS;
}

CUresult fakeEventCreate(CUevent* event, unsigned) {
  FAKE_GUARD();
  auto e = std::make_unique<CUevent_st>();
  *event = e.get();
  state().events[e.get()] = std::move(e);
  return CUDA_SUCCESS;
}

CUresult fakeEventRecord(CUevent event, CUstream stream) {
  FAKE_GUARD();
  trace("event stream=%p", static_cast<void*>(stream));
  if (!state().events.count(event)) return CUDA_ERROR_INVALID_HANDLE;
  event->at = std::chrono::steady_clock::now();  // work before it on the stream has already finished
  event->recorded = true;
  return CUDA_SUCCESS;
}

CUresult fakeEventSynchronize(CUevent) {
  FAKE_GUARD();
  return CUDA_SUCCESS;
}

CUresult fakeEventElapsedTime(float* ms, CUevent begin, CUevent end) {
  FAKE_GUARD();
  if (!begin->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(end->at - begin->at).count();
  return CUDA_SUCCESS;
}

CUresult fakeEventDestroy(CUevent event) {
  std::lock_guard lock(state().mutex);
  return state().events.erase(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult fakeInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (visibleDevices().empty()) return CUDA_ERROR_NO_DEVICE;
  std::lock_guard lock(state().mutex);
  state().initialised = true;
  return CUDA_SUCCESS;
}

// The cast that checks each entry against the driver's own signature for it.
template <class Pfn>
void* entry(Pfn f) {
  return reinterpret_cast<void*>(f);
}

const std::map<std::string_view, void*>& entryPoints() {
  static const std::map<std::string_view, void*> table = {
      {"cuGetErrorName", entry<PFN_cuGetErrorName_v6000>(&fakeGetErrorName)},
      {"cuGetErrorString", entry<PFN_cuGetErrorString_v6000>(&fakeGetErrorString)},
      {"cuInit", entry<PFN_cuInit_v2000>(&fakeInit)},
      {"cuDriverGetVersion", entry<PFN_cuDriverGetVersion_v2020>(&fakeDriverGetVersion)},
      {"cuDeviceGetCount", entry<PFN_cuDeviceGetCount_v2000>(&fakeDeviceGetCount)},
      {"cuDeviceGet", entry<PFN_cuDeviceGet_v2000>(&fakeDeviceGet)},
      {"cuDeviceGetName", entry<PFN_cuDeviceGetName_v2000>(&fakeDeviceGetName)},
      {"cuDeviceGetAttribute", entry<PFN_cuDeviceGetAttribute_v2000>(&fakeDeviceGetAttribute)},
      {"cuDeviceTotalMem", entry<PFN_cuDeviceTotalMem_v3020>(&fakeDeviceTotalMem)},
      {"cuDeviceGetPCIBusId", entry<PFN_cuDeviceGetPCIBusId_v4010>(&fakeDeviceGetPCIBusId)},
      {"cuDevicePrimaryCtxRetain", entry<PFN_cuDevicePrimaryCtxRetain_v7000>(&fakePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", entry<PFN_cuDevicePrimaryCtxRelease_v11000>(&fakePrimaryCtxRelease)},
      {"cuCtxSetCurrent", entry<PFN_cuCtxSetCurrent_v4000>(&fakeCtxSetCurrent)},
      {"cuCtxSynchronize", entry<PFN_cuCtxSynchronize_v2000>(&fakeCtxSynchronize)},
      {"cuCtxResetPersistingL2Cache", entry<PFN_cuCtxResetPersistingL2Cache_v11000>(&fakeCtxResetPersistingL2Cache)},
      {"cuModuleLoadDataEx", entry<PFN_cuModuleLoadDataEx_v2010>(&fakeModuleLoadDataEx)},
      {"cuModuleUnload", entry<PFN_cuModuleUnload_v2000>(&fakeModuleUnload)},
      {"cuModuleGetFunction", entry<PFN_cuModuleGetFunction_v2000>(&fakeModuleGetFunction)},
      {"cuFuncGetAttribute", entry<PFN_cuFuncGetAttribute_v2020>(&fakeFuncGetAttribute)},
      {"cuFuncSetAttribute", entry<PFN_cuFuncSetAttribute_v9000>(&fakeFuncSetAttribute)},
      {"cuLaunchKernel", entry<PFN_cuLaunchKernel_v4000>(&fakeLaunchKernel)},
      {"cuMemAlloc", entry<PFN_cuMemAlloc_v3020>(&fakeMemAlloc)},
      {"cuMemFree", entry<PFN_cuMemFree_v3020>(&fakeMemFree)},
      {"cuMemcpyHtoD", entry<PFN_cuMemcpyHtoD_v3020>(&fakeMemcpyHtoD)},
      {"cuMemcpyDtoH", entry<PFN_cuMemcpyDtoH_v3020>(&fakeMemcpyDtoH)},
      {"cuMemcpyDtoDAsync", entry<PFN_cuMemcpyDtoDAsync_v3020>(&fakeMemcpyDtoDAsync)},
      {"cuMemsetD8", entry<PFN_cuMemsetD8_v3020>(&fakeMemsetD8)},
      {"cuMemsetD8Async", entry<PFN_cuMemsetD8Async_v3020>(&fakeMemsetD8Async)},
      {"cuStreamCreate", entry<PFN_cuStreamCreate_v2000>(&fakeStreamCreate)},
      {"cuStreamDestroy", entry<PFN_cuStreamDestroy_v4000>(&fakeStreamDestroy)},
      {"cuStreamSynchronize", entry<PFN_cuStreamSynchronize_v2000>(&fakeStreamSynchronize)},
      {"cuEventCreate", entry<PFN_cuEventCreate_v2000>(&fakeEventCreate)},
      {"cuEventRecord", entry<PFN_cuEventRecord_v2000>(&fakeEventRecord)},
      {"cuEventSynchronize", entry<PFN_cuEventSynchronize_v2000>(&fakeEventSynchronize)},
      {"cuEventElapsedTime", entry<PFN_cuEventElapsedTime_v2000>(&fakeEventElapsedTime)},
      {"cuEventDestroy", entry<PFN_cuEventDestroy_v4000>(&fakeEventDestroy)},
  };
  return table;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) { return fakeInit(flags); }

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  const auto& table = entryPoints();
  const auto found = table.find(symbol);
  *pfn = found == table.end() ? nullptr : found->second;
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
