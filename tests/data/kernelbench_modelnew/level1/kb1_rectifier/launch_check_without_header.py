# expect: compile_error
# reason: 'C10_CUDA_KERNEL_LAUNCH_CHECK' is declared by <c10/cuda/CUDAException.h>
# The honest kernel calling C10_CUDA_KERNEL_LAUNCH_CHECK() without <c10/cuda/CUDAException.h>:
# torch/extension.h does not declare it, so load_inline's nvcc build fails on a GPU too (33 of 34 real
# solutions whose build failed on an A100 failed this way or with the guard or stream below).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto y = torch::empty_like(x);
    const int n = x.numel();
    const int threads = 256;
    relu_kernel<<<(n + threads - 1) / threads, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu = load_inline(name="relu", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=relu_source,
                   functions=["relu_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = relu

    def forward(self, x):
        return self.relu.relu_cuda(x.contiguous())
