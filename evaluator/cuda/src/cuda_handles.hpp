#pragma once
// RAII over the driver handles the GPU worker uses, and the check that turns a failed call into a
// CudaFailure naming the call and the driver's own message. Private to the GPU worker.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "cuset/evaluator/cuda/cuda_driver.hpp"

namespace cuset::detail {

// A CUDA call failed; `sticky` errors leave the context unusable.
struct CudaFailure {
  std::string message;
  bool sticky = false;
};

class Cuda {
 public:
  explicit Cuda(const CudaDriver& d) : d_(d) {}
  // Throws CudaFailure.
  void operator()(CUresult r, const char* what) const {
    if (r != CUDA_SUCCESS) throw CudaFailure{fmt::format("{}: {}", what, d_.describe(r)), CudaDriver::isSticky(r)};
  }
  const CudaDriver& driver() const { return d_; }

 private:
  const CudaDriver& d_;
};

class DeviceMemory {
 public:
  DeviceMemory(const Cuda& cuda, std::size_t bytes) : cuda_(cuda), bytes_(bytes) {
    cuda_(cuda_.driver().cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cuMemAlloc");
  }
  ~DeviceMemory() {
    if (ptr_) cuda_.driver().cuMemFree(ptr_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  CUdeviceptr get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  const Cuda& cuda_;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

class Module {
 public:
  Module(const Cuda& cuda, std::span<const std::byte> image, bool isCubin) : cuda_(cuda) {
    std::vector<char> text;
    const void* data = image.data();
    if (!isCubin) {  // PTX must be NUL-terminated
      text.assign(reinterpret_cast<const char*>(image.data()), reinterpret_cast<const char*>(image.data()) + image.size());
      text.push_back('\0');
      data = text.data();
    }
    std::array<char, 8192> log{};
    std::array<CUjit_option, 2> options = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    std::array<void*, 2> values = {log.data(), reinterpret_cast<void*>(log.size())};
    const CUresult r = cuda_.driver().cuModuleLoadDataEx(&module_, data, options.size(), options.data(), values.data());
    if (r != CUDA_SUCCESS) {
      throw CudaFailure{fmt::format("cuModuleLoadDataEx: {}{}{}", cuda_.driver().describe(r), log[0] ? ": " : "", log.data()),
                        CudaDriver::isSticky(r)};
    }
  }
  ~Module() {
    if (module_) cuda_.driver().cuModuleUnload(module_);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function(const std::string& symbol) const {
    CUfunction f = nullptr;
    cuda_(cuda_.driver().cuModuleGetFunction(&f, module_, symbol.c_str()), "cuModuleGetFunction");
    return f;
  }

 private:
  const Cuda& cuda_;
  CUmodule module_ = nullptr;
};

class Event {
 public:
  explicit Event(const Cuda& cuda) : cuda_(cuda) { cuda_(cuda_.driver().cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate"); }
  ~Event() {
    if (event_) cuda_.driver().cuEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return event_; }

 private:
  const Cuda& cuda_;
  CUevent event_ = nullptr;
};

}  // namespace cuset::detail
