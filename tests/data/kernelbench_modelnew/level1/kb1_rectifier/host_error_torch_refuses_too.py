# expect: compile_error
# reason: torch's own headers refuse it too
# Host code asking a TensorOptions for its sizes: the stand-in has no such member, and neither has torch's
# real TensorOptions, so load_inline's build fails on a GPU (a real solution, gemini level 2 problem 23,
# was `unsupported` here before #61: the stand-in's error looked like its own gap).
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
    auto y = torch::empty(x.options().sizes(), x.options());
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="options_sizes", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
