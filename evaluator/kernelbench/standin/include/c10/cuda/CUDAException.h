#pragma once
// Stand-in for torch's c10/cuda/CUDAException.h (the recorder's host build, docs/kernelbench-solutions.md
// "The build environment"): the CUDA check macros, and the CUDA runtime it includes. A recording has no
// asynchronous errors to check, so the checks only evaluate their expression.
#include <cuda_runtime.h>

#include "cuset_kb/torch.hpp"

#define C10_CUDA_CHECK(expr) ((void)(expr))
#define C10_CUDA_CHECK_WARN(expr) ((void)(expr))
#define C10_CUDA_KERNEL_LAUNCH_CHECK() ((void)0)
#define C10_CUDA_IGNORE_ERROR(expr) ((void)(expr))
#define C10_CUDA_CLEAR_ERROR() ((void)0)
