# expect: correct library: aten::abs
# Host code that uses torch API beyond the basics, as published solutions do: the deprecated x.type()
# handed to AT_DISPATCH, x.type().scalarType(), is_floating_point(), and a torch function (torch::abs)
# whose result a kernel reads. relu(x) = (x + |x|) / 2.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

template <typename scalar_t>
__global__ void half_sum_kernel(const scalar_t* x, const scalar_t* a, scalar_t* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (x[i] + a[i]) * scalar_t(0.5);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.type().scalarType() == torch::kFloat && x.is_floating_point(), "float input expected");
    auto a = torch::abs(x);
    auto y = torch::empty_like(x);
    int n = x.numel();
    AT_DISPATCH_FLOATING_TYPES(x.type(), "relu_cuda", ([&] {
        half_sum_kernel<scalar_t><<<(n + 255) / 256, 256>>>(x.data_ptr<scalar_t>(), a.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    }));
    return y;
}
"""
ext = load_inline(name="torch_api", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
