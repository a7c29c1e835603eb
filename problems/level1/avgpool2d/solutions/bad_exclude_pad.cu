/*@cuset
launches:
  - kernel: avgpool2d
    grid: [ceil_div(W, 32), ceil_div(H, 8), B * C]
    block: [32, 8]
    args: [x, y, H, W]
*/
// @expect: wrong_answer
// Bug: divides border outputs by the number of in-bounds inputs (count_include_pad=False) instead
// of 9: right in the interior, wrong on every edge.
extern "C" __global__ void avgpool2d(const float* __restrict__ x, float* __restrict__ y, int H, int W) {
  const float* plane = x + (size_t)blockIdx.z * H * W;
  const int ox = blockIdx.x * 32 + threadIdx.x, oy = blockIdx.y * 8 + threadIdx.y;
  if (ox >= W || oy >= H) return;
  float s = 0.0f;
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int iy = oy + dy, ix = ox + dx;
      if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
        s += plane[(size_t)iy * W + ix];
        ++n;
      }
    }
  y[(size_t)blockIdx.z * H * W + (size_t)oy * W + ox] = s / n;
}
