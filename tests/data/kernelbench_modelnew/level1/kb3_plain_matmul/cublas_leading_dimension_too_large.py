# expect: runtime_error
# cuBLAS told a leading dimension twice the real one: its view of A reaches past the tensor, which on a
# GPU reads memory that is not A (an out-of-bounds read the recording names).

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

torch::Tensor matmul_cublas(torch::Tensor a, torch::Tensor b) {
    const int m = a.size(0), k = a.size(1), n = b.size(1);
    auto c = torch::empty({m, n}, a.options());
    cublasHandle_t handle;
    cublasCreate(&handle);
    cublasSetStream(handle, at::cuda::getCurrentCUDAStream());
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t status = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.data_ptr<float>(), n,
                                        a.data_ptr<float>(), 2 * k, &beta, c.data_ptr<float>(), n);
    TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasSgemm failed");
    cublasDestroy(handle);
    return c;
}
"""
ext = load_inline(name="cublas_mm_bad_ld", cpp_sources="torch::Tensor matmul_cublas(torch::Tensor a, torch::Tensor b);", cuda_sources=source,
                  functions=["matmul_cublas"], extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def forward(self, A, B):
        return ext.matmul_cublas(A.contiguous(), B.contiguous())
