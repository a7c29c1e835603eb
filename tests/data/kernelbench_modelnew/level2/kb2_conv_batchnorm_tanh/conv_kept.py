# expect: correct library: aten::add_,aten::convolution,aten::native_batch_norm
# flags:
# BatchNorm2d's own forward updates running_mean, running_var and num_batches_tracked as the reference does.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d and BatchNorm2d stay torch ops; the tanh epilogue is a kernel.
source = """
#include <torch/extension.h>
__global__ void tanh_kernel(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tanhf(x[i]);
}
torch::Tensor tanh_cuda(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    long long n = x.numel();
    tanh_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="tanh_ext", cpp_sources="torch::Tensor tanh_cuda(torch::Tensor x);", cuda_sources=source, functions=["tanh_cuda"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return ext.tanh_cuda(self.bn(self.conv(x)))
