# expect: runtime_error
# reason: at sizes 'full' (checked, not run here)
# One block of 32 threads per row of the grid's y axis: valid at the simulator's scaled sizes, but at
# KernelBench's own (256 x 8192 elements) grid.y is 65,536, past the limit of 65,535, and the GPU refuses
# the launch. The plan is checked at the full sizes too, without running them.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_rows(const float* x, float* y, int n) {
    int i = blockIdx.y * 32 + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    relu_rows<<<dim3(1, (n + 31) / 32), 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="relu_rows", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
