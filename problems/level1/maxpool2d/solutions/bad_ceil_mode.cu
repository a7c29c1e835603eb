/*@cuset
launches:
  - kernel: maxpool2d
    grid: [ceil_div(W, 64), ceil_div(H, 2), B * C]
    block: [32]
    args: [x, y, H, W]
*/
// @expect: runtime_error
// @expect-reason: out-of-bounds write
// Bug: sizes the output with ceil (ceil_mode=True) while the output tensor uses floor: the extra
// row of an odd-height plane lands in the next plane, and the last plane's extra row past the end.
extern "C" __global__ void maxpool2d(const float* __restrict__ x, float* __restrict__ y, int H, int W) {
  const int OH = (H + 1) / 2, OW = (W + 1) / 2;
  const int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y;
  if (ox >= OW) return;
  const float* plane = x + (size_t)blockIdx.z * H * W;
  float m = -INFINITY;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int iy = 2 * oy + dy, ix = 2 * ox + dx;
      if (iy < H && ix < W) m = fmaxf(m, plane[(size_t)iy * W + ix]);
    }
  y[((size_t)blockIdx.z * (H / 2) + oy) * (W / 2) + ox] = m;
}
