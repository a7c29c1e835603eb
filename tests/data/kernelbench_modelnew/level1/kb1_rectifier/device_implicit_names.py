# expect: correct pure
# Device code that names what nvcc's implicit includes give it (FLT_MAX, INT_MAX, INFINITY, fmaxf,
# min/max on ints and floats) without including a header: nvcc under load_inline compiles it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int last = min(n - 1, INT_MAX);
    if (i <= last) {
        float v = fmaxf(x[i], -FLT_MAX);
        float lo = (v != v) ? NAN : 0.0f;
        y[i] = max(min(v, INFINITY), lo);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="implicit_names", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
