# expect: correct library: aten::relu
# load_inline fails (the C++ calls a function declared nowhere) and the solution falls back to torch,
# as it would under KernelBench.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
torch::Tensor relu_cuda(torch::Tensor x) { return launch_relu_somewhere(x); }
"""
try:
    ext = load_inline(name="broken_relu", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])
except Exception:
    ext = None


class ModelNew(nn.Module):
    def forward(self, x):
        if ext is not None:
            return ext.relu_cuda(x)
        return torch.relu(x)
