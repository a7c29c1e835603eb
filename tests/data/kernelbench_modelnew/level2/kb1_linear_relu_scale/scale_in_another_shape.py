# expect: correct library: aten::addmm
# The scale as a (1, out_features) parameter where Model has (out_features,): the same elements after
# KernelBench's seed (one draw of the same size), so KernelBench passes it, and the trial's scale binds
# to it (it was `unsupported` before #61: "a tensor of random numbers ... is no weight of the problem").
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# nn.Linear stays a torch op; the rectifier and the scale are fused into one kernel after it.
source = """
#include <torch/extension.h>
__global__ void relu_scale(const float* x, const float* scale, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] = fmaxf(x[i], 0.0f) * scale[i % cols];
}
torch::Tensor relu_scale_cuda(torch::Tensor x, torch::Tensor scale) {
    auto y = torch::empty_like(x);
    int rows = x.size(0), cols = x.size(1);
    relu_scale<<<(rows * cols + 255) / 256, 256>>>(x.data_ptr<float>(), scale.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""
fused = load_inline(name="relu_scale", cpp_sources="torch::Tensor relu_scale_cuda(torch::Tensor x, torch::Tensor scale);",
                    cuda_sources=source, functions=["relu_scale_cuda"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(1, out_features) * 0.5)

    def forward(self, x):
        return fused.relu_scale_cuda(self.gemm(x), self.scale)
