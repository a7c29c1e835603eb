/*@cuset
launches:
  - kernel: layernorm
    grid: [M]
    block: [256]
    args: [x, g, beta, n, C]
  - kernel: linear_gelu
    grid: [ceil_div(F, 64), ceil_div(M, 64)]
    block: [256]
    args: [n, W1, b1, a, M, F, C]
  - kernel: linear_residual
    grid: [ceil_div(C, 64), ceil_div(M, 64)]
    block: [256]
    args: [a, W2, b2, x, y, M, C, F]
workspace:
  n: {dtype: float32, shape: [M, C]}
  a: {dtype: float32, shape: [M, F]}
*/
// LayerNorm, then fc1 with bias and GELU in its epilogue, then fc2 with bias and the residual in its
// epilogue.

// Block-wide reductions: warp shuffles, then one partial per warp through shared memory; every
// thread gets the result. The leading barrier lets the scratch slots be reused by the next call.
__device__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float block_max(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

extern "C" __global__ void layernorm(const float* __restrict__ x, const float* __restrict__ g, const float* __restrict__ beta,
                                     float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const float* row = x + (size_t)blockIdx.x * N;
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += row[i];
  const float mean = block_sum(s, scratch) / N;
  float q = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) q += (row[i] - mean) * (row[i] - mean);
  const float rstd = rsqrtf(block_sum(q, scratch) / N + 1e-5f);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[(size_t)blockIdx.x * N + i] = (row[i] - mean) * rstd * g[i] + beta[i];
}
// fc1: bias and tanh-GELU in the epilogue.
// The product uses 64x64 output tiles per 256-thread block, 4x4 register tiles per thread and
// depth-16 shared-memory stages of x and W (both K-contiguous, so both loads are coalesced along K).
#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void linear_gelu(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b, float* __restrict__ y, int M, int N, int K) {
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
      v += b[c];
      v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      y[(size_t)r * N + c] = v;
    }
  }
}
// fc2: bias and residual in the epilogue.
// The product uses 64x64 output tiles per 256-thread block, 4x4 register tiles per thread and
// depth-16 shared-memory stages of x and W (both K-contiguous, so both loads are coalesced along K).

extern "C" __global__ void linear_residual(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b, const float* __restrict__ res, float* __restrict__ y, int M, int N, int K) {
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
      v += b[c] + res[(size_t)r * N + c];
      y[(size_t)r * N + c] = v;
    }
  }
}
