import torch
import torch.nn as nn

class Model(nn.Module):
    """Dropout in training mode: stochastic, so it cannot be judged against a reference."""
    def __init__(self, p):
        super(Model, self).__init__()
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(x)

batch_size = 64
dim = 1024

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return [0.5]
