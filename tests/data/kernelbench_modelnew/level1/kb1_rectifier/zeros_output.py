# expect: correct pure
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The output starts as zeros (torch::zeros) and the kernel writes only the positive elements.
source = """
#include <torch/extension.h>
__global__ void positives(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) y[i] = x[i];
}
torch::Tensor relu_into_zeros(torch::Tensor x) {
    auto y = torch::zeros_like(x);
    int n = x.numel();
    positives<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
m = load_inline(name="zeros_out", cpp_sources="torch::Tensor relu_into_zeros(torch::Tensor x);", cuda_sources=source,
                functions=["relu_into_zeros"])


class ModelNew(nn.Module):
    def forward(self, x):
        return m.relu_into_zeros(x)
