# expect: correct pure
# torch.utils.cpp_extension.load of files the solution writes into a temporary folder (its scratch
# folder here), bound by the PYBIND11_MODULE they hold, as several published solutions do.
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

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
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("relu_cuda", &relu_cuda, "relu");
}
"""
folder = tempfile.mkdtemp()
path = os.path.join(folder, "relu_kernel.cu")
with open(path, "w") as f:
    f.write(source)
ext = load(name="relu_from_file", sources=[path], build_directory=folder, verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
