/*@cuset
launches:
  - kernel: conv_relu_pool
    grid: [ceil_div(W / 2, 8), ceil_div(H / 2, 8), B * CO]
    block: [8, 8]
    args: [x, w, b, y, CI, CO, H, W]
*/
// @expect: wrong_answer
// Bug: applies the ReLU before adding the bias (max(conv, 0) + b instead of max(conv + b, 0)).
extern "C" __global__ void conv_relu_pool(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                          float* __restrict__ y, int CI, int CO, int H, int W) {
  const int OH = H / 2, OW = W / 2;
  const int batch = blockIdx.z / CO, co = blockIdx.z % CO;
  const int px = blockIdx.x * 8 + threadIdx.x, py = blockIdx.y * 8 + threadIdx.y;
  if (px >= OW || py >= OH) return;
  float m = -INFINITY;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int oy = 2 * py + dy, ox = 2 * px + dx;
      float s = 0.0f;
      for (int c = 0; c < CI; ++c)
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = oy + ky - 1, ix = ox + kx - 1;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              s += w[(((size_t)co * CI + c) * 3 + ky) * 3 + kx] * x[(((size_t)batch * CI + c) * H + iy) * W + ix];
          }
      m = fmaxf(m, s);
    }
  y[(((size_t)batch * CO + co) * OH + py) * OW + px] = fmaxf(m, 0.0f) + b[co];
}
