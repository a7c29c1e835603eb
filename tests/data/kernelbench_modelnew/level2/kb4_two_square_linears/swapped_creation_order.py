# expect: wrong_answer
# The layer applied first is created second: after the same seed it holds fc2's weights, as on a GPU.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.later = nn.Linear(dim, dim)
        self.earlier = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.clamp(self.later(torch.relu(self.earlier(x))), max=0.25)
