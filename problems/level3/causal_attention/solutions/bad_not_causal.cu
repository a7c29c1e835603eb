/*@cuset
launches:
  - kernel: attention
    grid: [ceil_div(T, 4), H, B]
    block: [128]
    args: [q, k, v, out, T, D, 0, {size: 0, type: int64}, {size: 0, type: int64}, {size: 0, type: int64}, {size: H * T * D, type: int64}, {size: T * D, type: int64}, {size: D, type: int64}, {size: H * T * D, type: int64}, {size: T * D, type: int64}, {size: D, type: int64}]
*/
// @expect: wrong_answer
// Bug: launches the attention kernel without the causal mask: every query also attends to the future.
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
