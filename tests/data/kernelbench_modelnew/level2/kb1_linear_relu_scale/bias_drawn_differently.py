# expect: correct library: aten::mm
# flags: initialisation_differs:bias initialisation_differs:scale
# kernelbench: false initialisation
# A hand-made bias that starts at zero where nn.Linear draws one: KernelBench seeds, builds Model, seeds
# again and builds ModelNew without copying weights, so on a GPU this bias is zero and the scale drawn
# after it is not Model's either (the generator is one draw behind): "Output mismatch" there. CuSeT's
# own trials bind both to the problem's weights (the kernels are right), and name the two parameters.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void bias_relu_scale(const float* x, const float* bias, const float* scale, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] = fmaxf(x[i] + bias[i % cols], 0.0f) * scale[i % cols];
}
torch::Tensor bias_relu_scale_cuda(torch::Tensor x, torch::Tensor bias, torch::Tensor scale) {
    auto y = torch::empty_like(x);
    int rows = x.size(0), cols = x.size(1);
    bias_relu_scale<<<(rows * cols + 255) / 256, 256>>>(x.data_ptr<float>(), bias.data_ptr<float>(), scale.data_ptr<float>(),
                                                        y.data_ptr<float>(), rows, cols);
    return y;
}
"""
fused = load_inline(name="bias_relu_scale", cpp_sources="torch::Tensor bias_relu_scale_cuda(torch::Tensor x, torch::Tensor bias, torch::Tensor scale);",
                    cuda_sources=source, functions=["bias_relu_scale_cuda"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.scale = nn.Parameter(torch.randn(scale_shape) * 0.5)

    def forward(self, x):
        return fused.bias_relu_scale_cuda(torch.matmul(x, self.gemm.weight.t()), self.bias, self.scale)
