import torch
import torch.nn as nn

class Model(nn.Module):
    """A bidirectional GRU given its initial state: the module also keeps an attribute named like the
    forward argument (KernelBench's GRUBidirectional does)."""
    def __init__(self, input_size, hidden_size, num_layers=2):
        super(Model, self).__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias=True, batch_first=False, dropout=0, bidirectional=True)
        self.h0 = torch.randn((num_layers * 2, batch_size, hidden_size))

    def forward(self, x, h0):
        output, h_n = self.gru(x, h0)
        return output

batch_size = 4
seq_len = 512
input_size = 64
hidden_size = 64
num_layers = 2

def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size), torch.randn((num_layers * 2, batch_size, hidden_size))]

def get_init_inputs():
    return [input_size, hidden_size, num_layers]
