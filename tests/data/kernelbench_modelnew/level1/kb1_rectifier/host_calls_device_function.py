# expect: compile_error
# reason: host code calls a __device__ function
# Host code computing the launch geometry with a __device__ helper: nvcc refuses the call ("calling a
# __device__ function from a __host__ function is not allowed"), so load_inline's build fails on a GPU,
# and here too (before #61 the host build compiled the call against an empty body).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__device__ int blocks_for(int n) { return (n + 255) / 256; }

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    relu_kernel<<<blocks_for(n), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="host_calls_device", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
