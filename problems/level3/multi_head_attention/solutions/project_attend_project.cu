/*@cuset
launches:
  - kernel: linear
    grid: [ceil_div(3 * C, 64), ceil_div(B * T, 64)]
    block: [256]
    args: [x, Wqkv, qkv, B * T, 3 * C, C]
  - kernel: attention
    grid: [ceil_div(T, 4), H, B]
    block: [128]
    args: [qkv, qkv, qkv, o, T, C / H, 0, {size: 0, type: int64}, {size: C, type: int64}, {size: 2 * C, type: int64}, {size: 3 * T * C, type: int64}, {size: C / H, type: int64}, {size: 3 * C, type: int64}, {size: T * C, type: int64}, {size: C / H, type: int64}, {size: C, type: int64}]
  - kernel: linear
    grid: [ceil_div(C, 64), ceil_div(B * T, 64)]
    block: [256]
    args: [o, Wo, y, B * T, C, C]
workspace:
  qkv: {dtype: float32, shape: [B * T, 3 * C]}
  o: {dtype: float32, shape: [B * T, C]}
*/
// Three launches: the packed QKV projection, attention reading heads in place from the packed
// buffer through strides (no transposes materialised), and the output projection.
// A plain linear layer, used for both projections.
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
