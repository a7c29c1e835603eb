import torch
import torch.nn as nn

class Model(nn.Module):
    """One step of a vanilla RNN whose hidden state is a plain tensor attribute reassigned in forward
    (KernelBench's VanillaRNN)."""
    def __init__(self, input_size, hidden_size, output_size):
        super(Model, self).__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = self.tanh(self.i2h(combined))
        output = self.h2o(self.hidden)
        return output

batch_size = 64
input_size = 256
hidden_size = 256
output_size = 128

def get_inputs():
    return [torch.randn(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, output_size]
