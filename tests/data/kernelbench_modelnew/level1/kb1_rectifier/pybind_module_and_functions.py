# expect: compile_error
# reason: the module's init function is defined twice
# cpp_sources with its own PYBIND11_MODULE, and `functions=[...]` too: load_inline appends a second
# PYBIND11_MODULE, and the build fails ("Error building extension", qwen36 level 2 problem 38 on an RTX
# 4090); before #61 it built here and ran.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
cpp_source = """
#include <torch/extension.h>
torch::Tensor relu_cuda(torch::Tensor x);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("relu_cuda", &relu_cuda, "ReLU");
}
"""
ext = load_inline(name="module_twice", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
