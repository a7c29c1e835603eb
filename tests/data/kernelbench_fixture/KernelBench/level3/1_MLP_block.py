import torch
import torch.nn as nn

class Model(nn.Module):
    """A transformer MLP block: LayerNorm, Linear, GELU, Linear, residual."""
    def __init__(self, dim, hidden):
        super(Model, self).__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))

batch_size = 64
seq_len = 128
dim = 512
hidden = 2048

def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]

def get_init_inputs():
    return [dim, hidden]
