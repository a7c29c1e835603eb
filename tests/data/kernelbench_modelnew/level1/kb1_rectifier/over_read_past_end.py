# expect: runtime_error
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Reads one element past the end of x for the last thread (multiplied by zero): KernelBench's check on
# a GPU never notices; CuSeT's fenced buffers fault.
source = """
#include <torch/extension.h>
__global__ void relu_peek(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f) + 0.0f * x[i + 1];
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_peek<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
m = load_inline(name="peek_ext", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=source, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return m.relu(x)
