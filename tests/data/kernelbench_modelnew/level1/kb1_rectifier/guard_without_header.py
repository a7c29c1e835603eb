# expect: compile_error
# reason: 'OptionalCUDAGuard' is declared by <c10/cuda/CUDAGuard.h>
# at::cuda::OptionalCUDAGuard with <ATen/cuda/CUDAContext.h> alone: the context header brings the
# stream and the check macros but not the guards, under load_inline as here.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <typename scalar_t>
__global__ void rectify(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        scalar_t v = in[i];
        out[i] = v > scalar_t(0) ? v : scalar_t(0);
    }
}

torch::Tensor rectify_forward(torch::Tensor input) {
    const at::cuda::OptionalCUDAGuard guard(device_of(input));
    auto output = at::empty_like(input);
    const int64_t n = input.numel();
    const int blocks = std::min<int64_t>((n + 511) / 512, 1024);
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "rectify_forward", ([&] {
        rectify<scalar_t><<<blocks, 512, 0, stream>>>(input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
    }));
    return output;
}
"""

module = load_inline(name="rectify", cpp_sources=["torch::Tensor rectify_forward(torch::Tensor input);"], cuda_sources=[source],
                     functions=["rectify_forward"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return module.rectify_forward(x)
