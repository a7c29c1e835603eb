# expect: runtime_error
# form: triton
# reason: out-of-bounds
# A Triton kernel without the mask on its load and store: the last program reads and writes past the
# end of x and y (whose length is not a multiple of the block). On a GPU that is memory corruption or
# an illegal address, silently passing or not; here the simulator names the tensor and the overrun.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0))


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1000),)](x, y, n, BLOCK=1024)
        return y
