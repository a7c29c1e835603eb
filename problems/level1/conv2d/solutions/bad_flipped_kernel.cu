/*@cuset
launches:
  - kernel: conv2d
    grid: [ceil_div(W, 16), ceil_div(H, 16), B * CO]
    block: [16, 16]
    args: [x, w, b, y, CI, CO, H, W]
*/
// @expect: wrong_answer
// Bug: applies the 3x3 kernel flipped (true convolution), while PyTorch's conv2d is a
// cross-correlation.
extern "C" __global__ void conv2d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                  float* __restrict__ y, int CI, int CO, int H, int W) {
  const int batch = blockIdx.z / CO, co = blockIdx.z % CO;
  const int ox = blockIdx.x * 16 + threadIdx.x, oy = blockIdx.y * 16 + threadIdx.y;
  if (ox >= W || oy >= H) return;
  float s = b[co];
  for (int c = 0; c < CI; ++c) {
    const float* plane = x + ((size_t)batch * CI + c) * H * W;
    const float* k = w + ((size_t)co * CI + c) * 9;
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        const int iy = oy + ky - 1, ix = ox + kx - 1;
        if (iy >= 0 && iy < H && ix >= 0 && ix < W) s += k[(2 - ky) * 3 + (2 - kx)] * plane[iy * W + ix];
      }
  }
  y[(((size_t)batch * CO + co) * H + oy) * W + ox] = s;
}
