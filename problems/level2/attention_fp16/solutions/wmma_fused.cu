/*@cuset
launches:
  - kernel: attention_wmma
    grid: [ceil_div(T, 16), B]
    block: [32]
    shared_bytes: 16 * T * 4 + 16 * T * 2
    args: [Q, K, V, O, T, D]
*/
// Fused attention on tensor cores (WMMA), one warp per 16 query rows: S = Q K^T tile by tile into
// shared memory (K read as a column-major K^T, no transpose needed), a float32 softmax per row (one
// lane per row), the probabilities rounded to float16, then O = P V, staged through the same shared
// scores (D <= T) to be rounded to float16. Assumes T and D are multiples of 16, as both size sets are;
// at the full sizes a block takes 96 * T = 192 KiB of dynamic shared memory (the manifest opts in).
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void attention_wmma(const __half* __restrict__ Q, const __half* __restrict__ K, const __half* __restrict__ V,
                                          __half* __restrict__ O, int T, int D) {
  extern __shared__ __align__(32) unsigned char smem[];
  float* S = reinterpret_cast<float*>(smem);          // [16][T]: scores, then the output staging
  __half* P = reinterpret_cast<__half*>(S + 16 * T);  // [16][T]: probabilities for the second product
  const int lane = threadIdx.x, q0 = blockIdx.x * 16, b = blockIdx.y;
  const __half* Qb = Q + ((size_t)b * T + q0) * D;
  const __half* Kb = K + (size_t)b * T * D;
  const __half* Vb = V + (size_t)b * T * D;

  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> qa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> kb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  for (int j = 0; j < T; j += 16) {
    wmma::fill_fragment(acc, 0.0f);
    for (int d = 0; d < D; d += 16) {
      wmma::load_matrix_sync(qa, Qb + d, D);
      wmma::load_matrix_sync(kb, Kb + (size_t)j * D + d, D);
      wmma::mma_sync(acc, qa, kb, acc);
    }
    wmma::store_matrix_sync(S + j, acc, T, wmma::mem_row_major);
  }
  __syncwarp();

  const float scale = rsqrtf(static_cast<float>(D));
  if (lane < 16) {
    float* row = S + lane * T;
    float top = -INFINITY;
    for (int j = 0; j < T; ++j) top = fmaxf(top, row[j] * scale);
    float sum = 0.0f;
    for (int j = 0; j < T; ++j) {
      row[j] = expf(row[j] * scale - top);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < T; ++j) P[lane * T + j] = __float2half(row[j] * inv);
  }
  __syncwarp();

  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> pa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> vb;
  for (int d = 0; d < D; d += 16) {
    wmma::fill_fragment(acc, 0.0f);
    for (int j = 0; j < T; j += 16) {
      wmma::load_matrix_sync(pa, P + j, T);
      wmma::load_matrix_sync(vb, Vb + (size_t)j * D + d, D);
      wmma::mma_sync(acc, pa, vb, acc);
    }
    wmma::store_matrix_sync(S + d, acc, T, wmma::mem_row_major);
  }
  __syncwarp();
  for (int i = lane; i < 16 * D; i += 32) O[((size_t)b * T + q0 + i / D) * D + i % D] = __float2half(S[(i / D) * T + i % D]);
}
