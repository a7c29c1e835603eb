import torch
import torch.nn as nn

class Model(nn.Module):
    """Product of two lower triangular matrices, itself lower triangular."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))

N = 1024

def get_inputs():
    A = torch.tril(torch.rand(N, N))
    B = torch.tril(torch.rand(N, N))
    return [A, B]

def get_init_inputs():
    return []
