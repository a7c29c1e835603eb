import torch
import torch.nn as nn

class Model(nn.Module):
    """A Linear layer whose output is clamped into a single value: a constant output, which a kernel
    that ignores its inputs would match (KernelBench ships problems like it)."""
    def __init__(self, in_features, out_features, value):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.value = value

    def forward(self, x):
        return torch.clamp(self.linear(x), min=self.value, max=self.value)

batch_size = 32
in_features = 64
out_features = 32
value = 0.5

def get_inputs():
    return [torch.randn(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, value]
