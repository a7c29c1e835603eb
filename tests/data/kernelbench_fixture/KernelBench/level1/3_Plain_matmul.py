import torch
import torch.nn as nn

class Model(nn.Module):
    """C = A @ B for A (M, K) and B (K, N)."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)

M = 1024 * 2
K = 1024
N = 2048

def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]

def get_init_inputs():
    return []
