# expect: correct pure
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void row_relu(const float* row_in, float* row_out, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) row_out[c] = fmaxf(row_in[c], 0.0f);
}

// One launch per row, each on the row's own pointers.
torch::Tensor rowwise(torch::Tensor x) {
    auto out = torch::empty_like(x);
    const int rows = x.size(0), cols = x.size(1);
    for (int r = 0; r < rows; ++r) {
        auto in_row = x[r];
        auto out_row = out.select(0, r);
        row_relu<<<(cols + 255) / 256, 256>>>(in_row.data_ptr<float>(), out_row.data_ptr<float>(), cols);
    }
    return out;
}
"""

rows = load_inline(name="rows", cpp_sources="torch::Tensor rowwise(torch::Tensor x);", cuda_sources=source, functions=["rowwise"])


class ModelNew(nn.Module):
    def forward(self, x):
        return rows.rowwise(x)
