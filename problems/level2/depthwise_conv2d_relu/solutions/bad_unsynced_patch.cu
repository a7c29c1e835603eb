/*@cuset
launches:
  - kernel: depthwise_relu
    grid: [ceil_div(W, 32), ceil_div(H, 8), B * C]
    block: [32, 8]
    args: [x, w, b, y, C, H, W]
*/
// @expect: runtime_error
// @expect-reason: a race in shared memory
// Bug: no barrier between staging the patch and reading neighbours' entries of it (a race).
extern "C" __global__ void depthwise_relu(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                          float* __restrict__ y, int C, int H, int W) {
  __shared__ float patch[10][34];
  const int c = blockIdx.z % C;
  const float* plane = x + (size_t)blockIdx.z * H * W;
  const int tid = threadIdx.y * 32 + threadIdx.x;
  for (int e = tid; e < 10 * 34; e += 256) {
    const int iy = blockIdx.y * 8 + e / 34 - 1, ix = blockIdx.x * 32 + e % 34 - 1;
    patch[e / 34][e % 34] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? plane[(size_t)iy * W + ix] : 0.0f;
  }
  const int ox = blockIdx.x * 32 + threadIdx.x, oy = blockIdx.y * 8 + threadIdx.y;
  if (ox >= W || oy >= H) return;
  const float* k = w + c * 9;
  float s = b[c];
  for (int ky = 0; ky < 3; ++ky)
    for (int kx = 0; kx < 3; ++kx) s = fmaf(k[ky * 3 + kx], patch[threadIdx.y + ky][threadIdx.x + kx], s);
  y[(size_t)blockIdx.z * H * W + (size_t)oy * W + ox] = fmaxf(s, 0.0f);
}
