/*@cuset
launches:
  - kernel: linear_bias_relu
    grid: [ceil_div(N, 64), ceil_div(M, 64)]
    block: [256]
    args: [x, W, b, y, M, N, K]
*/
// @expect: wrong_answer
// Bug: indexes the bias by output row instead of by output feature (a broadcast along the wrong axis).
// The product uses 64x64 output tiles per 256-thread block, 4x4 register tiles per thread and
// depth-16 shared-memory stages of x and W (both K-contiguous, so both loads are coalesced along K).
#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void linear_bias_relu(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b, float* __restrict__ y, int M, int N, int K) {
  __shared__ float xs[BK][BM + 4];
  __shared__ float ws[BK][BN + 4];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = tid; e < BM * BK; e += 256) {
      const int r = e / BK, k = e % BK;
      xs[k][r] = (row0 + r < M && k0 + k < K) ? x[(size_t)(row0 + r) * K + k0 + k] : 0.0f;
      ws[k][r] = (col0 + r < N && k0 + k < K) ? W[(size_t)(col0 + r) * K + k0 + k] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = xs[k][ty * 4 + i];
      for (int j = 0; j < 4; ++j) b[j] = ws[k][tx * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int r = row0 + ty * 4 + i;
    if (r >= M) continue;
    for (int j = 0; j < 4; ++j) {
      const int c = col0 + tx * 4 + j;
      if (c >= N) continue;
      float v = acc[i][j];
      v = fmaxf(v + b[r], 0.0f);
      y[(size_t)r * N + c] = v;
    }
  }
}
