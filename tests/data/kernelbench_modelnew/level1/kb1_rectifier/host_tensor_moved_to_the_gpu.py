# expect: correct pure
# The same output made on the CPU and moved with `.to(x.device())` before the kernel writes it, as
# qwencoder level 1 problem 52 does: on the GPU, as on a GPU.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::zeros(x.sizes(), torch::kFloat32).to(x.device());
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="host_then_gpu", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
