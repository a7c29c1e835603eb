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

// Every section of a 64-bit ELF image (a cubin, or a host shared library) by name, with its size.
Expected<std::map<std::string, std::size_t>> elfSectionSizes(std::span<const std::byte> image);

// Static shared memory of each kernel of a cubin: the size of its `.nv.shared.<symbol>` section
// (kernels without one use none). On sm_80+ the section includes the 1 KiB reserved per block.
Expected<std::map<std::string, std::size_t>> cubinStaticSharedBytes(std::span<const std::byte> image);

// Entry-point names of PTX text (`.entry name(`), for the compute_XX (PTX-only) path.
std::vector<std::string> ptxKernelNames(std::string_view ptx);

}  // namespace cuset
