# expect: wrong_answer library: aten::convolution
# reason: otherwise than the reference
# The same kernel overwriting running_mean with the batch mean (no momentum): its outputs are right, the
# state it leaves is not what the reference's BatchNorm leaves, and CuSeT compares that state.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void bn_tanh(const float* x, float* y, const float* w, const float* b, float* running_mean, float* running_var,
                        int n, int c, int hw, float eps, float momentum) {
    __shared__ float sum[256], sq[256];
    const int ch = blockIdx.x;
    float s = 0.0f, s2 = 0.0f;
    for (int i = threadIdx.x; i < n * hw; i += blockDim.x) {
        float v = x[((long long)(i / hw) * c + ch) * hw + i % hw];
        s += v;
        s2 += v * v;
    }
    sum[threadIdx.x] = s;
    sq[threadIdx.x] = s2;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            sum[threadIdx.x] += sum[threadIdx.x + stride];
            sq[threadIdx.x] += sq[threadIdx.x + stride];
        }
        __syncthreads();
    }
    const float count = (float)(n * hw);
    const float mean = sum[0] / count;
    const float var = fmaxf(sq[0] / count - mean * mean, 0.0f);
    const float inv = rsqrtf(var + eps);
    for (int i = threadIdx.x; i < n * hw; i += blockDim.x) {
        long long at = ((long long)(i / hw) * c + ch) * hw + i % hw;
        y[at] = tanhf((x[at] - mean) * inv * w[ch] + b[ch]);
    }
    if (threadIdx.x == 0) {
        running_mean[ch] = mean;  // no momentum: not what BatchNorm keeps
        running_var[ch] = (1.0f - momentum) * running_var[ch] + momentum * var * count / (count - 1.0f);
    }
}

torch::Tensor bn_tanh_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor running_mean, torch::Tensor running_var,
                           double eps, double momentum) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3);
    bn_tanh<<<c, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), running_mean.data_ptr<float>(),
                        running_var.data_ptr<float>(), n, c, hw, (float)eps, (float)momentum);
    return y;
}
"""
ext = load_inline(name="bn_tanh_ext",
                  cpp_sources="torch::Tensor bn_tanh_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor running_mean, "
                              "torch::Tensor running_var, double eps, double momentum);",
                  cuda_sources=source, functions=["bn_tanh_cuda"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        bn = self.bn
        return ext.bn_tanh_cuda(self.conv(x), bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.eps, bn.momentum)
