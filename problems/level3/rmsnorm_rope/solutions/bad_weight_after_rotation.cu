/*@cuset
launches:
  - kernel: rmsnorm_rope
    grid: [ceil_div(H, 4), T, B]
    block: [128]
    args: [x, w, y, T, H, D]
*/
// @expect: wrong_answer
// Bug: applies the rotation before the per-feature weight, i.e. w is applied to rotated features.
// RoPE mixes features i and i + D/2, which carry different weights, so the order matters.
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
    const double ang = (double)blockIdx.y / pow(10000.0, (double)i / half);
    const float c = (float)cos(ang), s = (float)sin(ang);
    y[base + i] = (a[k] * c - b[k] * s) * r * w[i];
    y[base + half + i] = (b[k] * c + a[k] * s) * r * w[half + i];
  }
}
