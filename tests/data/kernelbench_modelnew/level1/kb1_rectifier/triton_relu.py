# expect: correct pure
# form: triton
# A Triton ModelNew (KernelBench's backend="triton"): recognised as the Triton form, statically checked,
# its launch recorded and compiled to PTX, run on the simulator; never a sandbox violation for Triton's
# own start-up.
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
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
