# expect: sandbox_violation
# Writes outside the private scratch folder stay violations: here a file in /tmp, beside the scratch folder.
import os

import torch
import torch.nn as nn

with open("/tmp/planted_by_solution.txt", "w") as f:
    f.write("x")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
