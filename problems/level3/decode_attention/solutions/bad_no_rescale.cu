/*@cuset
launches:
  - kernel: decode_attention
    grid: [H, B]
    block: [256]
    args: [q, k, v, out, S, D]
*/
// @expect: wrong_answer
// Bug: an online softmax that never rescales the accumulator when the running maximum grows, so
// keys seen before a new maximum keep weights relative to the old one.
#define MAXD 128
extern "C" __global__ void decode_attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                            float* __restrict__ out, int S, int D) {
  const int lane = threadIdx.x % 32;
  if (threadIdx.x >= 32) return;
  const size_t head = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
  const float scale = rsqrtf((float)D);
  float acc[MAXD / 32] = {0.0f, 0.0f, 0.0f, 0.0f};
  float m = -INFINITY, s = 0.0f;
  for (int j = 0; j < S; ++j) {
    float dot = 0.0f;
    for (int i = 0; i < MAXD / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < D) dot = fmaf(q[head * D + d] * scale, k[(head * S + j) * D + d], dot);
    }
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    m = fmaxf(m, dot);
    const float p = expf(dot - m);
    s += p;
    for (int i = 0; i < MAXD / 32; ++i) {
      const int d = lane + 32 * i;
      if (d < D) acc[i] += p * v[(head * S + j) * D + d];
    }
  }
  for (int i = 0; i < MAXD / 32; ++i) {
    const int d = lane + 32 * i;
    if (d < D) out[head * D + d] = acc[i] / s;
  }
}
