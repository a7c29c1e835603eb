/*@cuset
launches:
  - kernel: decode_attention
    grid: [H, B]
    block: [256]
    args: [q, k, v, out, S, D]
*/
// Flash-decoding within a block: the 8 warps take interleaved keys, each keeping an online-softmax
// state (max, normaliser, D-wide accumulator spread over its lanes); the states are merged through
// shared memory at the end. Each key row is one coalesced warp load. D <= 128.
#define MAXD 128
extern "C" __global__ void decode_attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                            float* __restrict__ out, int S, int D) {
  __shared__ float wm[8], ws[8], wacc[8][MAXD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t head = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
  const float* kh = k + head * S * D;
  const float* vh = v + head * S * D;
  const float scale = rsqrtf((float)D);
  float qr[MAXD / 32], acc[MAXD / 32];
  for (int i = 0; i < MAXD / 32; ++i) {
    const int d = lane + 32 * i;
    qr[i] = d < D ? q[head * D + d] * scale : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, s = 0.0f;
  for (int j = warp; j < S; j += 8) {
    float dot = 0.0f;
    for (int i = 0; i < MAXD / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < D) dot = fmaf(qr[i], kh[(size_t)j * D + d], dot);
    }
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    const float nm = fmaxf(m, dot);
    const float correction = expf(m - nm), p = expf(dot - nm);
    s = s * correction + p;
    for (int i = 0; i < MAXD / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < D) acc[i] = fmaf(p, vh[(size_t)j * D + d], acc[i] * correction);
    }
    m = nm;
  }
  if (lane == 0) {
    wm[warp] = m;
    ws[warp] = s;
  }
  for (int i = 0; i < MAXD / 32; ++i) {
    const int d = lane + 32 * i;
    if (d < D) wacc[warp][d] = acc[i];
  }
  __syncthreads();
  if (warp != 0) return;
  float gm = -INFINITY;
  for (int w = 0; w < 8; ++w) gm = fmaxf(gm, wm[w]);
  float total = 0.0f;
  for (int w = 0; w < 8; ++w) total += wm[w] == -INFINITY ? 0.0f : ws[w] * expf(wm[w] - gm);
  for (int i = 0; i < MAXD / 32; ++i) {
    const int d = lane + 32 * i;
    if (d >= D) continue;
    float o = 0.0f;
    for (int w = 0; w < 8; ++w) o += wm[w] == -INFINITY ? 0.0f : wacc[w][d] * expf(wm[w] - gm);
    out[head * D + d] = o / total;
  }
}
