import torch
import torch.nn as nn

class Model(nn.Module):
    """Per-layer scales read with .item() in __init__ (Swin's drop-path rates) and a normaliser read
    with .item() in forward: neither runs on meta tensors."""
    def __init__(self, dim, depth):
        super(Model, self).__init__()
        self.scales = [x.item() for x in torch.linspace(0.5, 1.0, depth)]
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = x + self.scales[i] * torch.relu(layer(x))
        peak = x.abs().max().item()
        return x / (1.0 + peak)

batch_size = 512
dim = 1024
depth = 4

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return [dim, depth]
