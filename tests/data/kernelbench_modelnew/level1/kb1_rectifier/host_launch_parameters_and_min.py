# expect: correct pure
# Host code as nvcc sees it: <device_launch_parameters.h> included, min/max called on the host, a
# function defined in cuda_sources declared and called from cpp_sources (load_inline links the two).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <cuda_runtime.h>
#include <device_launch_parameters.h>

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void launch_relu(const float* x, float* y, int n) {
    int threads = min(256, max(32, n));
    int blocks = min((n + threads - 1) / threads, 65535 * 64);
    relu_kernel<<<blocks, threads>>>(x, y, n);
}
"""
cpp_source = """
#include <torch/extension.h>
void launch_relu(const float* x, float* y, int n);
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    launch_relu(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<int>(x.numel()));
    return y;
}
"""
ext = load_inline(name="launch_params", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
