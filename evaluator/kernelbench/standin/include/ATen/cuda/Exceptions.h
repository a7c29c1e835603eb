#pragma once
// Stand-in for torch's ATen/cuda/Exceptions.h: ATen's CUDA check macros (see c10/cuda/CUDAException.h).
#include "c10/cuda/CUDAException.h"

#define AT_CUDA_CHECK(expr) ((void)(expr))
#define AT_CUDA_DRIVER_CHECK(expr) ((void)(expr))
#define TORCH_CUDABLAS_CHECK(expr) ((void)(expr))
