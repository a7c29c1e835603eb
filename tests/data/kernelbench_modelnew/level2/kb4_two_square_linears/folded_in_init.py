# expect: correct library: aten::mul_,aten::addmm,aten::relu,aten::clamp,aten::mul
# flags:
# kernelbench: true
# __init__ changes a weight in place (fc2 scaled by 2, as folding a batch norm does) and forward undoes
# it: ModelNew's fc2 is twice Model's, so the trial's weights go through the same change, on a copy.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        with torch.no_grad():
            self.fc2.weight.data.mul_(2.0)
            self.fc2.bias.mul_(2.0)

    def forward(self, x):
        return torch.clamp(self.fc2(torch.relu(self.fc1(x))) * 0.5, max=clamp_max)  # noqa: F821
