/*@cuset
launches:
  - kernel: matmul_fp16_wmma
    grid: [ceil_div(N, 32), ceil_div(M, 64)]
    block: [128]
    args: [A, B, C, M, N, K]
*/
// Tensor cores through WMMA: each warp of a 4-warp block owns a 16x32 strip of C as two float32
// accumulators that share one A fragment per K step, so every A fragment is loaded once for two
// products. The strip is staged through shared memory to be rounded to float16. Assumes M, N and K
// are multiples of 16 and N of 32, as every size set of this problem is.
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void matmul_fp16_wmma(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C, int M,
                                            int N, int K) {
  __shared__ float staged[4][16 * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = blockIdx.y * 64 + warp * 16, col = blockIdx.x * 32;
  if (row >= M || col >= N) return;  // the whole warp leaves together
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b0, b1;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> left, right;
  wmma::fill_fragment(left, 0.0f);
  wmma::fill_fragment(right, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + (size_t)row * K + k, K);
    wmma::load_matrix_sync(b0, B + (size_t)k * N + col, N);
    wmma::load_matrix_sync(b1, B + (size_t)k * N + col + 16, N);
    wmma::mma_sync(left, a, b0, left);
    wmma::mma_sync(right, a, b1, right);
  }
  wmma::store_matrix_sync(staged[warp], left, 32, wmma::mem_row_major);
  wmma::store_matrix_sync(staged[warp] + 16, right, 32, wmma::mem_row_major);
  __syncwarp();
  for (int i = lane; i < 16 * 32; i += 32) C[(size_t)(row + i / 32) * N + col + i % 32] = __float2half(staged[warp][i]);
}
