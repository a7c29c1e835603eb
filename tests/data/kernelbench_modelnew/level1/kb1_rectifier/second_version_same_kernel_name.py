# expect: correct pure
# kernelbench: true
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A first version and a second one defining the same kernel and helper names (as a model that "recompiles
# with updated source" writes them), only the second launched: load_inline builds each extension into a
# module of its own, so the first's definitions never meet the second's (qwen36 level 2 problem 23).
source_v1 = """
#include <torch/extension.h>

__device__ float rectify(float v) { return v; }

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = rectify(x[i]);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

source_v2 = """
#include <torch/extension.h>

__device__ float rectify(float v) { return v > 0.0f ? v : 0.0f; }

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = rectify(x[i]);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu_v1 = load_inline(name="relu_v1", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source_v1,
                      functions=["relu_cuda"])
relu_v2 = load_inline(name="relu_v2", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source_v2,
                      functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_v2.relu_cuda(x.contiguous())
