#pragma once
// nvcc makes threadIdx, blockDim, warpSize and the rest known to every .cu file; the host build has
// no device code (the splitter removed it) and takes warpSize from cuda_types.hpp. Including this
// header, as some host code does, adds nothing.
#include <cuda_runtime.h>
