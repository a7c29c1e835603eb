/*@cuset
launches:
  - kernel: conv2d
    grid: [ceil_div(W, 16), ceil_div(H, 16), B * ceil_div(CO, 4)]
    block: [16, 16]
    args: [x, w, mean, var, gamma, beta, y, CI, CO, H, W]
*/
// The 16x16-tile, 4-channel convolution of level1/conv2d; BatchNorm is folded into a per-channel
// scale and shift applied with the ReLU in the epilogue, so the conv output never goes to memory.
#define T 16
#define OC 4
extern "C" __global__ void conv2d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ mean, const float* __restrict__ var,
                                  const float* __restrict__ gamma, const float* __restrict__ beta,
                                  float* __restrict__ y, int CI, int CO, int H, int W) {
  __shared__ float patch[T + 2][T + 2];
  __shared__ float ks[OC][9];
  const int groups = (CO + OC - 1) / OC;
  const int batch = blockIdx.z / groups, co0 = (blockIdx.z % groups) * OC;
  const int ox = blockIdx.x * T + threadIdx.x, oy = blockIdx.y * T + threadIdx.y;
  const int tid = threadIdx.y * T + threadIdx.x;
  float acc[OC] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int c = 0; c < CI; ++c) {
    const float* plane = x + ((size_t)batch * CI + c) * H * W;
    for (int e = tid; e < (T + 2) * (T + 2); e += T * T) {
      const int py = e / (T + 2), px = e % (T + 2);
      const int iy = blockIdx.y * T + py - 1, ix = blockIdx.x * T + px - 1;
      patch[py][px] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? plane[(size_t)iy * W + ix] : 0.0f;
    }
    if (tid < OC * 9) {
      const int o = tid / 9;
      ks[o][tid % 9] = co0 + o < CO ? w[((size_t)(co0 + o) * CI + c) * 9 + tid % 9] : 0.0f;
    }
    __syncthreads();
    for (int o = 0; o < OC; ++o) {
      float s = 0.0f;
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) s = fmaf(ks[o][ky * 3 + kx], patch[threadIdx.y + ky][threadIdx.x + kx], s);
      acc[o] += s;
    }
    __syncthreads();
  }
  if (ox >= W || oy >= H) return;
  for (int o = 0; o < OC; ++o) {
    const int co = co0 + o;
    if (co >= CO) continue;
    const float scale = gamma[co] * rsqrtf(var[co] + 1e-5f);
    y[(((size_t)batch * CO + co) * H + oy) * W + ox] = fmaxf((acc[o] - mean[co]) * scale + beta[co], 0.0f);
  }
}
