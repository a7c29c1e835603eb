# expect: correct library: aten::relu
# torch.compile, as a decorator and as a call: the recording runs it eagerly (its numerics are eager's;
# compiling would start a C++ compiler and write caches, which the sandbox forbids).
import torch
import torch.nn as nn


@torch.compile(fullgraph=True)
def rectify(x):
    return torch.relu(x)


class Model(nn.Module):
    def forward(self, x):
        return rectify(x)


ModelNew = torch.compile(Model, mode="max-autotune")
