#pragma once
// THC was removed from PyTorch in 1.11: a build that includes it fails under load_inline as here.
#error "THC/THC.h: No such file or directory (THC was removed from PyTorch 1.11; include <ATen/cuda/CUDAContext.h>)"
