# expect: correct library: aten::relu
# form: triton
# A decoy (KernelGYM's name): a Triton kernel is defined, but forward answers with PyTorch's own relu
# whenever the input is on the GPU, which it always is. Correct, and marked as not its own kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=inside)


class ModelNew(nn.Module):
    def forward(self, x):
        if x.is_cuda:
            return torch.relu(x)
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
