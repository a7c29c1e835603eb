# expect: compile_error
# The same failing build, not caught: load_inline's error ends the solution, as under KernelBench.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
torch::Tensor relu_cuda(torch::Tensor x) { return launch_relu_somewhere(x); }
"""
ext = load_inline(name="broken_relu", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
