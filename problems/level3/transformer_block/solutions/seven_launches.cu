/*@cuset
launches:
  - kernel: rmsnorm
    grid: [B * T]
    block: [256]
    args: [x, wn1, n1, C]
  - kernel: linear
    grid: [ceil_div(3 * C, 64), ceil_div(B * T, 64)]
    block: [256]
    args: [n1, Wqkv, qkv, B * T, 3 * C, C]
  - kernel: attention
    grid: [ceil_div(T, 4), H, B]
    block: [128]
    args: [qkv, qkv, qkv, att, T, C / H, 1, {size: 0, type: int64}, {size: C, type: int64}, {size: 2 * C, type: int64}, {size: 3 * T * C, type: int64}, {size: C / H, type: int64}, {size: 3 * C, type: int64}, {size: T * C, type: int64}, {size: C / H, type: int64}, {size: C, type: int64}]
  - kernel: linear_residual
    grid: [ceil_div(C, 64), ceil_div(B * T, 64)]
    block: [256]
    args: [att, Wo, x, h, B * T, C, C]
  - kernel: rmsnorm
    grid: [B * T]
    block: [256]
    args: [h, wn2, n2, C]
  - kernel: swiglu_proj
    grid: [ceil_div(F, 64), ceil_div(B * T, 64)]
    block: [256]
    args: [n2, W1, W3, a, B * T, F, C]
  - kernel: linear_residual
    grid: [ceil_div(C, 64), ceil_div(B * T, 64)]
    block: [256]
    args: [a, W2, h, y, B * T, C, F]
workspace:
  n1: {dtype: float32, shape: [B * T, C]}
  qkv: {dtype: float32, shape: [B * T, 3 * C]}
  att: {dtype: float32, shape: [B * T, C]}
  h: {dtype: float32, shape: [B * T, C]}
  n2: {dtype: float32, shape: [B * T, C]}
  a: {dtype: float32, shape: [B * T, F]}
*/
// The block as seven launches: norm, QKV projection, causal attention (heads read in place from the
// packed projection), output projection with the residual in its epilogue, norm, the fused SwiGLU
// up projection, and the down projection with the second residual in its epilogue.

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

// RMSNorm of each row (one block per row), eps 1e-6.
extern "C" __global__ void rmsnorm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const float* row = x + (size_t)blockIdx.x * N;
  float q = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) q = fmaf(row[i], row[i], q);
  const float r = rsqrtf(block_sum(q, scratch) / N + 1e-6f);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[(size_t)blockIdx.x * N + i] = row[i] * r * w[i];
}
// Plain linear layer (QKV projection).
// The product uses 64x64 output tiles per 256-thread block, 4x4 register tiles per thread and
// depth-16 shared-memory stages of x and W (both K-contiguous, so both loads are coalesced along K).
#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void linear(const float* __restrict__ x, const float* __restrict__ W, float* __restrict__ y, int M, int N, int K) {
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

      y[(size_t)r * N + c] = v;
    }
  }
}
// Linear layer adding a residual stream in its epilogue.
// The product uses 64x64 output tiles per 256-thread block, 4x4 register tiles per thread and
// depth-16 shared-memory stages of x and W (both K-contiguous, so both loads are coalesced along K).

extern "C" __global__ void linear_residual(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ res, float* __restrict__ y, int M, int N, int K) {
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
      v += res[(size_t)r * N + c];
      y[(size_t)r * N + c] = v;
    }
  }
}

// SwiGLU projection: a = silu(x @ W1^T) * (x @ W3^T). Both products share the staged x tile, so x
// is read once for the two weight matrices (64x64 tiles, 4x4 register tiles per thread per matrix).
extern "C" __global__ void swiglu_proj(const float* __restrict__ x, const float* __restrict__ W1, const float* __restrict__ W3,
                                       float* __restrict__ a, int M, int N, int K) {
  __shared__ float xs[16][68];
  __shared__ float w1s[16][68];
  __shared__ float w3s[16][68];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  float g[4][4] = {}, u[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = tid; e < 64 * 16; e += 256) {
      const int r = e / 16, k = e % 16;
      const bool kIn = k0 + k < K;
      xs[k][r] = (row0 + r < M && kIn) ? x[(size_t)(row0 + r) * K + k0 + k] : 0.0f;
      w1s[k][r] = (col0 + r < N && kIn) ? W1[(size_t)(col0 + r) * K + k0 + k] : 0.0f;
      w3s[k][r] = (col0 + r < N && kIn) ? W3[(size_t)(col0 + r) * K + k0 + k] : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < 16; ++k) {
      float xa[4], b1[4], b3[4];
      for (int i = 0; i < 4; ++i) xa[i] = xs[k][ty * 4 + i];
      for (int j = 0; j < 4; ++j) {
        b1[j] = w1s[k][tx * 4 + j];
        b3[j] = w3s[k][tx * 4 + j];
      }
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          g[i][j] = fmaf(xa[i], b1[j], g[i][j]);
          u[i][j] = fmaf(xa[i], b3[j], u[i][j]);
        }
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int r = row0 + ty * 4 + i;
    if (r >= M) continue;
    for (int j = 0; j < 4; ++j) {
      const int c = col0 + tx * 4 + j;
      if (c < N) a[(size_t)r * N + c] = g[i][j] / (1.0f + expf(-g[i][j])) * u[i][j];
    }
  }
}

// Attention with one warp per query row and an online softmax (running max m, normaliser s, and
// output accumulator rescaled as m grows), so the T x T score matrix is never materialised. Lanes
// split the head dimension (D <= 128): the q.k dot product is a warp reduction and each lane owns
// D/32 output features. Tensors are addressed through strides, so the same kernel reads [B, H, T, D]
// tensors or a packed [B, T, 3C] projection.
#define MAXD 128
extern "C" __global__ void attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                     float* __restrict__ o, int T, int D, int causal, long long qOff, long long kOff, long long vOff,
                                     long long sB, long long sH, long long sT, long long oB, long long oH, long long oT) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = blockIdx.x * (blockDim.x / 32) + warp;
  if (t >= T) return;  // the whole warp leaves together
  const size_t head = (size_t)blockIdx.z * sB + (size_t)blockIdx.y * sH;
  const float scale = rsqrtf((float)D);
  float qr[MAXD / 32], acc[MAXD / 32];
  for (int i = 0; i < MAXD / 32; ++i) {
    const int d = lane + 32 * i;
    qr[i] = d < D ? q[qOff + head + (size_t)t * sT + d] * scale : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, s = 0.0f;
  const int end = causal ? t + 1 : T;
  for (int j = 0; j < end; ++j) {
    const float* kj = k + kOff + head + (size_t)j * sT;
    const float* vj = v + vOff + head + (size_t)j * sT;
    float dot = 0.0f;
    for (int i = 0; i < MAXD / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < D) dot = fmaf(qr[i], kj[d], dot);
    }
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    const float nm = fmaxf(m, dot);
    const float correction = expf(m - nm), p = expf(dot - nm);
    s = s * correction + p;
    for (int i = 0; i < MAXD / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < D) acc[i] = fmaf(p, vj[d], acc[i] * correction);
    }
    m = nm;
  }
  const size_t out = (size_t)blockIdx.z * oB + (size_t)blockIdx.y * oH + (size_t)t * oT;
  for (int i = 0; i < MAXD / 32; ++i) {
    const int d = lane + 32 * i;
    if (d < D) o[out + d] = acc[i] / s;
  }
}
