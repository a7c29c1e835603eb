# expect: correct library: aten::clone
# __init__ derives a transposed copy of each weight (a buffer; the copy is a library step, aten::clone):
# the derivation runs on every trial's fresh weights before forward, and the kernel reads the copies.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void linear_t(const float* x, const float* wt, const float* b, float* y, int rows, int n, float lo, float hi) {
    int r = blockIdx.x, c = threadIdx.x;
    if (r >= rows || c >= n) return;
    float acc = b[c];
    for (int k = 0; k < n; ++k) acc += x[r * n + k] * wt[k * n + c];
    y[r * n + c] = fminf(fmaxf(acc, lo), hi);
}
torch::Tensor linear_clamped(torch::Tensor x, torch::Tensor wt, torch::Tensor b, double lo, double hi) {
    auto y = torch::empty_like(x);
    int rows = x.size(0), n = x.size(1);
    linear_t<<<rows, n>>>(x.data_ptr<float>(), wt.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), rows, n, (float)lo, (float)hi);
    return y;
}
"""
ext = load_inline(name="linear_t", cpp_sources="torch::Tensor linear_clamped(torch::Tensor x, torch::Tensor wt, torch::Tensor b, double lo, double hi);",
                  cuda_sources=source, functions=["linear_clamped"])


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.register_buffer("w1_t", self.fc1.weight.t().contiguous())
        self.w2_t = self.fc2.weight.detach().t().contiguous()

    def forward(self, x):
        h = ext.linear_clamped(x, self.w1_t, self.fc1.bias, 0.0, float("inf"))
        return ext.linear_clamped(h, self.w2_t, self.fc2.bias, float("-inf"), clamp_max)  # noqa: F821
