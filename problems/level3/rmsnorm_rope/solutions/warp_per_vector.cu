/*@cuset
launches:
  - kernel: rmsnorm_rope
    grid: [ceil_div(H, 4), T, B]
    block: [128]
    args: [x, w, y, T, H, D]
*/
// One warp per (b, t, h) vector of D <= 128 features: lanes hold the pairs (i, i + D/2), reduce the
// sum of squares with shuffles, normalise, and rotate in registers: one read, one write.
extern "C" __global__ void rmsnorm_rope(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int T, int H, int D) {
  const int lane = threadIdx.x % 32;
  const int h = blockIdx.x * 4 + threadIdx.x / 32;
  if (h >= H) return;
  const int half = D / 2;
  const size_t base = (((size_t)blockIdx.z * T + blockIdx.y) * H + h) * D;
  float a[2], b[2], q = 0.0f;
  for (int k = 0; k < 2; ++k) {
    const int i = lane + 32 * k;
    a[k] = i < half ? x[base + i] : 0.0f;
    b[k] = i < half ? x[base + half + i] : 0.0f;
    q += a[k] * a[k] + b[k] * b[k];
  }
  for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
  const float r = rsqrtf(q / D + 1e-6f);
  for (int k = 0; k < 2; ++k) {
    const int i = lane + 32 * k;
    if (i >= half) continue;
    const float x1 = a[k] * r * w[i], x2 = b[k] * r * w[half + i];
    double s, c;
    sincos((double)blockIdx.y / pow(10000.0, (double)i / half), &s, &c);
    y[base + i] = x1 * (float)c - x2 * (float)s;
    y[base + half + i] = x2 * (float)c + x1 * (float)s;
  }
}
