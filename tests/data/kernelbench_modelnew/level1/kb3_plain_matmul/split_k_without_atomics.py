# expect: runtime_error pure
# reason: a race in global memory: this thread reads bytes written by block (0,0,0) thread (0,0,0) (byte 0 of output
# reason: this access at line 13 of cuda_sources of split_k_racing, the other at line 13 of cuda_sources of split_k_racing
# kernelbench: false
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Split-K with a plain `+=` into C: the four blocks of one tile lose each other's updates on a GPU; the
# simulator, running blocks one after another, sums exactly, and its race check names the race.
source = r"""
#include <torch/extension.h>
#define SPLITS 4

__global__ void matmul_split_k(const float* A, const float* B, float* C, int M, int K, int N) {
    int row = blockIdx.y * 16 + threadIdx.y;
    int col = blockIdx.x * 16 + threadIdx.x;
    if (row >= M || col >= N) return;
    int chunk = (K + SPLITS - 1) / SPLITS;
    int begin = blockIdx.z * chunk, end = min(K, begin + chunk);
    float acc = 0.0f;
    for (int k = begin; k < end; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] += acc;
}

torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B) {
    int M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::zeros({M, N}, A.options());
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (M + 15) / 16, SPLITS);
    matmul_split_k<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, K, N);
    return C;
}
"""

mm = load_inline(name="split_k_racing", cpp_sources="torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B);", cuda_sources=source,
                 functions=["matmul_cuda"])


class ModelNew(nn.Module):
    def forward(self, A, B):
        return mm.matmul_cuda(A.contiguous(), B.contiguous())
