# expect: unsupported
# reason: the host code uses torch or CUDA API the recording's stand-in does not have
# `torch::tensor(value, options)` exists in torch (its build passes on a GPU) and not in the recording's
# stand-in: g++ says "'tensor' is not a member of 'torch'", which names no `torch::`, so before #61 it
# passed for the solution's own compile error (a real solution, qwencoder level 1 problem 98, the GPU
# judged correct). Torch's real headers accept it: the recording's limit, `unsupported`.
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
    auto y = torch::empty_like(x);
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    auto scale = torch::tensor(1.0f, torch::TensorOptions().device(x.device()));
    return y * scale;
}
"""
ext = load_inline(name="tensor_factory", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
