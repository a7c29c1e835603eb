# expect: correct library: aten::relu
# The device code does not build (80 KB of static shared memory: ptxas refuses more than 48 KB), so
# load_inline raises, as nvcc's build under KernelBench would, and the solution falls back to torch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    __shared__ float tile[20480];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = tile[threadIdx.x] > 0.0f ? tile[threadIdx.x] : 0.0f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
try:
    ext = load_inline(name="too_much_shared", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source,
                      functions=["relu_cuda"])
except RuntimeError:
    ext = None


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x) if ext is not None else torch.relu(x)
