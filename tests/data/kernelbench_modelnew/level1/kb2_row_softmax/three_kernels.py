# expect: correct pure
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Three kernels with two intermediates of their own: row maxima, exponentials with row sums, division.
source = r"""
#include <torch/extension.h>
#include <cfloat>

__global__ void row_max(const float* x, float* m, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float best = -FLT_MAX;
    for (int c = 0; c < cols; ++c) best = fmaxf(best, x[(size_t)r * cols + c]);
    m[r] = best;
}

__global__ void exp_and_sum(const float* x, const float* m, float* e, float* s, int rows, int cols) {
    int r = blockIdx.x;
    __shared__ float partial[128];
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = expf(x[(size_t)r * cols + c] - m[r]);
        e[(size_t)r * cols + c] = v;
        acc += v;
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) s[r] = partial[0];
}

__global__ void divide(float* e, const float* s, int rows, int cols) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)rows * cols) e[i] /= s[i / cols];
}

torch::Tensor softmax_rows(torch::Tensor x) {
    const int rows = x.size(0), cols = x.size(1);
    auto maxima = torch::empty({rows}, x.options());
    auto sums = torch::empty({rows}, x.options());
    auto out = torch::empty_like(x);
    row_max<<<(rows + 63) / 64, 64>>>(x.data_ptr<float>(), maxima.data_ptr<float>(), rows, cols);
    exp_and_sum<<<rows, 128>>>(x.data_ptr<float>(), maxima.data_ptr<float>(), out.data_ptr<float>(), sums.data_ptr<float>(), rows, cols);
    const long long total = (long long)rows * cols;
    divide<<<(unsigned)((total + 255) / 256), 256>>>(out.data_ptr<float>(), sums.data_ptr<float>(), rows, cols);
    return out;
}
"""

softmax = load_inline(name="softmax_rows", cpp_sources="torch::Tensor softmax_rows(torch::Tensor x);", cuda_sources=source,
                      functions=["softmax_rows"])


class ModelNew(nn.Module):
    def forward(self, x):
        return softmax.softmax_rows(x)
