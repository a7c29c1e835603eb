# expect: correct library: aten::amax,aten::sum,aten::div
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The reductions are torch ops in host code: they become library steps between the kernel and the end.
source = r"""
#include <torch/extension.h>

__global__ void shifted_exp(const float* x, const float* m, float* e, int cols, long long total) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) e[i] = expf(x[i] - m[i / cols]);
}

torch::Tensor softmax_host(torch::Tensor x) {
    auto maxima = x.amax({1}, true);
    auto e = torch::empty_like(x);
    long long total = x.numel();
    int cols = x.size(1);
    shifted_exp<<<(unsigned)((total + 255) / 256), 256>>>(x.data_ptr<float>(), maxima.data_ptr<float>(), e.data_ptr<float>(), cols, total);
    return e / e.sum({1}, true);
}
"""

mod = load_inline(name="softmax_host", cpp_sources="torch::Tensor softmax_host(torch::Tensor x);", cuda_sources=source,
                  functions=["softmax_host"])


class ModelNew(nn.Module):
    def forward(self, x):
        return mod.softmax_host(x)
