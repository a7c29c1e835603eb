# expect: sandbox_violation
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Host code that signals its parent (the recorder's server or the evaluator) while it is being recorded:
# the seccomp filter (cuset_restrict_syscalls, the C++ one the recorder calls) ends it first.
source = """
#include <torch/extension.h>
extern "C" int kill(int, int);
extern "C" int getppid();
__global__ void relu_k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu_cuda(torch::Tensor x) {
    kill(getppid(), 9);
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
m = load_inline(name="kill_ext", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return m.relu_cuda(x)
