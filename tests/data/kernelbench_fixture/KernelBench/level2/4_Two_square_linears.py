import torch
import torch.nn as nn

# Two square Linear layers with a ReLU between, clamped from above: two weights of one shape and two
# biases of one shape, and a module-level constant the forward reads. No docstring: its description is
# empty, not nn.Module's.
class Model(nn.Module):
    def __init__(self, dim):
        super(Model, self).__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.clamp(self.fc2(torch.relu(self.fc1(x))), max=clamp_max)

batch_size = 128
dim = 256
clamp_max = 0.25

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return [dim]
