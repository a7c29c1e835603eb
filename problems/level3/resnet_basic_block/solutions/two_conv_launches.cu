/*@cuset
launches:
  - kernel: conv_bn
    grid: [ceil_div(W, 16), ceil_div(H, 16), B * ceil_div(C, 4)]
    block: [16, 16]
    args: [x, w1, m1, v1, g1, b1, x, h, C, H, W, 0]
  - kernel: conv_bn
    grid: [ceil_div(W, 16), ceil_div(H, 16), B * ceil_div(C, 4)]
    block: [16, 16]
    args: [h, w2, m2, v2, g2, b2, x, y, C, H, W, 1]
workspace:
  h: {dtype: float32, shape: [B, C, H, W]}
*/
// Two launches of one conv+BN(+residual)+ReLU kernel; the intermediate activation lives in a
// workspace.

// 3x3 convolution (padding 1, no bias) with inference BatchNorm folded into the epilogue, an optional
// residual add, then ReLU. A block computes a 16x16 pixel tile for 4 output channels, staging the
// 18x18 input patch of each input channel and the 4 channels' 3x3 weights in shared memory.
#define T 16
#define OC 4
extern "C" __global__ void conv_bn(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ mean,
                                   const float* __restrict__ var, const float* __restrict__ gamma, const float* __restrict__ beta,
                                   const float* __restrict__ res, float* __restrict__ y, int C, int H, int W, int addResidual) {
  __shared__ float patch[T + 2][T + 2];
  __shared__ float ks[OC][9];
  const int groups = (C + OC - 1) / OC;
  const int batch = blockIdx.z / groups, co0 = (blockIdx.z % groups) * OC;
  const int ox = blockIdx.x * T + threadIdx.x, oy = blockIdx.y * T + threadIdx.y;
  const int tid = threadIdx.y * T + threadIdx.x;
  float acc[OC] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int c = 0; c < C; ++c) {
    const float* plane = x + ((size_t)batch * C + c) * H * W;
    for (int e = tid; e < (T + 2) * (T + 2); e += T * T) {
      const int iy = blockIdx.y * T + e / (T + 2) - 1, ix = blockIdx.x * T + e % (T + 2) - 1;
      patch[e / (T + 2)][e % (T + 2)] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? plane[(size_t)iy * W + ix] : 0.0f;
    }
    if (tid < OC * 9) ks[tid / 9][tid % 9] = co0 + tid / 9 < C ? w[((size_t)(co0 + tid / 9) * C + c) * 9 + tid % 9] : 0.0f;
    __syncthreads();
    for (int o = 0; o < OC; ++o)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) acc[o] = fmaf(ks[o][ky * 3 + kx], patch[threadIdx.y + ky][threadIdx.x + kx], acc[o]);
    __syncthreads();
  }
  if (ox >= W || oy >= H) return;
  for (int o = 0; o < OC; ++o) {
    const int co = co0 + o;
    if (co >= C) continue;
    const size_t at = (((size_t)batch * C + co) * H + oy) * W + ox;
    float v = (acc[o] - mean[co]) * (gamma[co] * rsqrtf(var[co] + 1e-5f)) + beta[co];
    if (addResidual) v += res[at];
    y[at] = fmaxf(v, 0.0f);
  }
}
