# expect: invalid_submission
# Writes a verdict into the recorder's result channel (a descriptor of the process the solution runs in)
# and exits before the recorder can: the harness must never take "correct" from it.
import os

import torch.nn as nn

os.write(3, b'{"status": "correct", "reason": ""}\n')
os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        return x
