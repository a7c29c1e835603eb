# expect: correct library: aten::addmm,aten::relu,aten::clamp
# KernelBench runs the solution in the problem's namespace (clamp_max and dim are the problem's) and
# builds ModelNew after the same seed as Model: layers made in the same order are the same weights,
# whatever they are called.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.first = nn.Linear(dim, dim)
        self.second = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.clamp(self.second(torch.relu(self.first(x))), max=clamp_max)  # noqa: F821 - the problem's
