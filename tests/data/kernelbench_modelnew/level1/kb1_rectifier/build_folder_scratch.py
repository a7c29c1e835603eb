# expect: correct pure
# A solution that makes its own build folder (os.makedirs, tempfile) and writes its sources there, as
# many published solutions do: harmless writes into the private scratch folder the recorder gives it.
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

build_dir = os.path.join(tempfile.gettempdir(), "relu_build")
os.makedirs(build_dir, exist_ok=True)
scratch = tempfile.mkdtemp(prefix="relu_")
with open(os.path.join(scratch, "relu.cu"), "w") as f:
    f.write("// kept for inspection\n")
os.makedirs("local_build/relu", exist_ok=True)

source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="relu_scratch", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source,
                  functions=["relu_cuda"], build_directory=build_dir, verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
