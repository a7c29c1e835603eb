/*@cuset
launches:
  - kernel: matmul_rect
    grid: [ceil_div(N, 64), ceil_div(M, 64)]
    block: [256]
    args: [A, B, C, M, N, K]
*/
// @expect: runtime_error
// @expect-reason: a race in shared memory
// Bug: no barrier after the inner product, so fast threads overwrite the shared tiles for the next
// depth step while slower threads are still reading the current ones (a race).

// 64x64 output tile per block of 256 threads, each thread accumulating a 4x4 register tile; A and B
// tiles of depth 16 are staged in shared memory (A transposed so both inner-loop reads are
// broadcast-or-contiguous). Edges are zero-filled, so any M, N, K work.
#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void matmul_rect(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;  // this thread owns rows ty*4.., columns tx*4..
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = tid; e < BM * BK; e += 256) {  // A tile: 64 rows x 16 columns
      const int r = e / BK, c = e % BK;
      const int gr = row0 + r, gc = k0 + c;
      As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += 256) {  // B tile: 16 rows x 64 columns
      const int r = e / BN, c = e % BN;
      const int gr = k0 + r, gc = col0 + c;
      Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty * 4 + i];
      for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
  for (int i = 0; i < 4; ++i) {
    const int r = row0 + ty * 4 + i;
    if (r >= M) continue;
    for (int j = 0; j < 4; ++j) {
      const int c = col0 + tx * 4 + j;
      if (c < N) C[(size_t)r * N + c] = acc[i][j];
    }
  }
}
