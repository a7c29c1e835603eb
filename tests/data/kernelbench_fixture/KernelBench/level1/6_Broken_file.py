import torch
import torch.nn as nn

# Deliberately broken (a syntax error): the import must skip it with the reason and go on.
class Model(nn.Module)
    def forward(self, x):
        return x

def get_inputs():
    return [torch.rand(4)]

def get_init_inputs():
    return []
