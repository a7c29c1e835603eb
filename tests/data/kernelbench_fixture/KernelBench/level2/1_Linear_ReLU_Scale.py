import torch
import torch.nn as nn

class Model(nn.Module):
    """y = relu(x W^T + b) * scale, with a learned scale per output feature."""
    def __init__(self, in_features, out_features, scale_shape):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape) * 0.5)

    def forward(self, x):
        x = self.gemm(x)
        x = torch.relu(x)
        return x * self.scale

batch_size = 512
in_features = 1024
out_features = 2048
scale_shape = (out_features,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scale_shape]
