#include "cuset/evaluator/cuda/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"

namespace cuset {
namespace {

constexpr const char* kDefaultLibrary = "libcuda.so.1";
constexpr const char* kUseSim = "on a machine without an NVIDIA GPU use --backend sim (CPU simulator) or --backend compile-only";

}  // namespace

Expected<std::unique_ptr<CudaDriver>> CudaDriver::load() {
  const char* override = std::getenv("CUSET_LIBCUDA");
  const std::string library = override && *override ? override : kDefaultLibrary;
  // RTLD_NODELETE: the driver stays mapped for the life of the process, as its own threads expect.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* why = dlerror();
    return Unexpected(
        fmt::format("cannot load the CUDA driver {} ({}): install the NVIDIA driver, or {}", library, why ? why : "not found", kUseSim));
  }
  // The toolkit's stub answers every call with CUDA_ERROR_STUB_LIBRARY; say so before anything else.
  if (auto init = reinterpret_cast<PFN_cuInit_v2000>(dlsym(handle, "cuInit")); init && init(0) == CUDA_ERROR_STUB_LIBRARY) {
    return Unexpected(
        fmt::format("{} is the CUDA toolkit's stub library, not a driver: this machine has no NVIDIA driver installed; {}", library, kUseSim));
  }
  auto getProc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  if (!getProc) {
    return Unexpected(
        fmt::format("{} has no cuGetProcAddress_v2: the driver is older than CUDA 12.0; update the NVIDIA driver to 525 or newer", library));
  }
  auto d = std::make_unique<CudaDriver>(Key{});
  d->libraryPath_ = library;
  CUdriverProcAddressQueryResult found{};
#define CUSET_RESOLVE(name, type)                                                                                                                    \
  if (getProc(#name, reinterpret_cast<void**>(&d->name), kCudaDriverApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||              \
      d->name == nullptr) {                                                                                                                          \
    return Unexpected(fmt::format("{} does not provide {} (CUDA {}.{} API): update the NVIDIA driver", library, #name, kCudaDriverApiVersion / 1000, \
                                  kCudaDriverApiVersion % 1000 / 10));                                                                               \
  }
  CUSET_CUDA_DRIVER_FUNCTIONS(CUSET_RESOLVE)
#undef CUSET_RESOLVE

  const CUresult init = d->cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    return Unexpected(
        fmt::format("{} is the CUDA toolkit's stub library, not a driver: this machine has no NVIDIA driver installed; {}", library, kUseSim));
  }
  if (init == CUDA_ERROR_NO_DEVICE) return Unexpected(fmt::format("{}: the driver sees no CUDA device; {}", library, kUseSim));
  if (init == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || init == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
    return Unexpected(fmt::format("{}: {}: update the NVIDIA driver", library, d->describe(init)));
  }
  if (init != CUDA_SUCCESS) return Unexpected(fmt::format("{}: cuInit failed: {}", library, d->describe(init)));
  d->cuDriverGetVersion(&d->version_);
  if (d->version_ < kCudaDriverApiVersion) {
    return Unexpected(fmt::format("{} supports CUDA {}.{}, older than the {}.{} the cuda backend needs: update the NVIDIA driver", library,
                                  d->version_ / 1000, d->version_ % 1000 / 10, kCudaDriverApiVersion / 1000, kCudaDriverApiVersion % 1000 / 10));
  }
  return d;
}

bool CudaDriver::sharedWithLibTorch() {
  const char* override = std::getenv("CUSET_LIBCUDA");
  return (override == nullptr || *override == '\0') && TorchReference::cudaAvailable();
}

Expected<const CudaDriver*> CudaDriver::get() {
  // Loaded once per process; a failure is remembered too, so every caller gets the same line.
  static std::once_flag once;
  static Expected<std::unique_ptr<CudaDriver>> loaded = Unexpected(std::string("not loaded"));
  std::call_once(once, [] { loaded = load(); });
  if (!loaded) return Unexpected(loaded.error());
  return static_cast<const CudaDriver*>(loaded->get());
}

std::string CudaDriver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  if (!name) return fmt::format("CUresult {}", static_cast<int>(result));
  return text ? fmt::format("{} ({})", name, text) : std::string(name);
}

void CudaDriver::check(CUresult result, const char* what) const {
  if (result != CUDA_SUCCESS) throw makeError("{}: {}", what, describe(result));
}

bool CudaDriver::isSticky(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

}  // namespace cuset
