#pragma once
// Lists the kernel entry points of a compiled module, so a manifest naming a __device__ helper (or a
// kernel NVRTC never instantiated) is an invalid_submission at compile time rather than a launch failure.
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset {

// Entry-point symbol names of a cubin (ELF64: FUNC symbols carrying the CUDA entry flag in st_other).
// Every offset is bounds-checked: a truncated or corrupt image gives an error, never a crash.
Expected<std::vector<std::string>> cubinKernelNames(std::span<const std::byte> image);

// What the compiler decided for one kernel, as the driver reads it at launch (the cubin's `.nv.info`
// attributes): a launch asking for more than these allow is refused ("too many resources requested").
struct KernelResources {
  std::size_t staticSharedBytes = 0;  // `.nv.shared.<symbol>`, the 1 KiB sm_80+ reserves included
  unsigned registers = 0;             // per thread (EIATTR_REGCOUNT)
  unsigned maxThreads = 0;            // __launch_bounds__'s maximum threads per block (EIATTR_MAX_THREADS); 0: none
  std::size_t localBytes = 0;         // stack frame per thread, local memory (EIATTR_FRAME_SIZE)
};

// Resources of every entry point of a cubin, by symbol. Bounds-checked like the rest.
Expected<std::map<std::string, KernelResources>> cubinKernelResources(std::span<const std::byte> image);

// Entry-point names of PTX text (`.entry name(`), for the compute_XX (PTX-only) path.
std::vector<std::string> ptxKernelNames(std::string_view ptx);

}  // namespace cuset
