# expect: runtime_error
# fc1 writes h on a side stream while the current stream reads it, and nothing orders them: on a GPU
# the result depends on the scheduling.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.side = torch.cuda.Stream()

    def forward(self, x):
        with torch.cuda.stream(self.side):
            h = torch.relu(self.fc1(x))
        return torch.clamp(self.fc2(h), max=clamp_max)  # noqa: F821
