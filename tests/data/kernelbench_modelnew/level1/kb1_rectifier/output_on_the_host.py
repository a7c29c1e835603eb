# expect: runtime_error
# reason: in the host's memory (torch::empty in host code, with no CUDA device in its options)
# The output made with `torch::empty(x.sizes(), torch::kFloat32)`: TensorOptions' device is the CPU, so on
# a GPU the kernel writes host memory it cannot reach (qwencoder level 1 problem 51 failed there; before
# #61 the recording put every host-made tensor on the GPU and judged it correct).
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
    auto y = torch::empty(x.sizes(), torch::kFloat32);
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="host_output", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
