/*@cuset
launches:
  - kernel: matmul_bf16_wmma
    grid: [ceil_div(N, 32), ceil_div(M, 32)]
    block: [128]
    args: [A, B, C, M, N, K]
*/
// Tensor cores through WMMA: each warp of a 4-warp block owns one 16x16 tile of C and walks K in
// steps of 16 with bf16 fragments and a float32 accumulator; the tile goes through shared memory to
// be rounded to bfloat16. Assumes M, N and K are multiples of 16, as every size set of this problem is.
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void matmul_bf16_wmma(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                            __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float staged[4][16 * 16];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = blockIdx.y * 32 + (warp / 2) * 16, col = blockIdx.x * 32 + (warp % 2) * 16;
  if (row >= M || col >= N) return;  // the whole warp leaves together
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + (size_t)row * K + k, K);
    wmma::load_matrix_sync(b, B + (size_t)k * N + col, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(staged[warp], acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = lane; i < 16 * 16; i += 32) C[(size_t)(row + i / 16) * N + col + i % 16] = __float2bfloat16(staged[warp][i]);
}
