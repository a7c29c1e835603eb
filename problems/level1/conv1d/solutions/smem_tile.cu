/*@cuset
launches:
  - kernel: conv1d
    grid: [ceil_div(L, 128), ceil_div(CO, 8), B]
    block: [128]
    args: [x, w, b, y, CI, CO, L]
*/
// A block computes 128 positions x 8 output channels. Input rows (with a one-element halo each side)
// and the 8 channels' weights are staged 16 input channels at a time, so each loaded input value
// is reused 3 x 8 times.
#define TL 128
#define TC 16
#define TO 8
extern "C" __global__ void conv1d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                  float* __restrict__ y, int CI, int CO, int L) {
  __shared__ float xs[TC][TL + 2];
  __shared__ float ws[TO][TC][3];
  const int l0 = blockIdx.x * TL, co0 = blockIdx.y * TO, batch = blockIdx.z;
  const int l = l0 + threadIdx.x;
  float acc[TO];
  for (int o = 0; o < TO; ++o) acc[o] = 0.0f;
  for (int c0 = 0; c0 < CI; c0 += TC) {
    for (int e = threadIdx.x; e < TC * (TL + 2); e += blockDim.x) {
      const int c = e / (TL + 2), p = l0 - 1 + e % (TL + 2);
      xs[c][e % (TL + 2)] = (c0 + c < CI && p >= 0 && p < L) ? x[((size_t)batch * CI + c0 + c) * L + p] : 0.0f;
    }
    for (int e = threadIdx.x; e < TO * TC * 3; e += blockDim.x) {
      const int o = e / (TC * 3), c = (e / 3) % TC, k = e % 3;
      ws[o][c][k] = (co0 + o < CO && c0 + c < CI) ? w[((size_t)(co0 + o) * CI + c0 + c) * 3 + k] : 0.0f;
    }
    __syncthreads();
    for (int c = 0; c < TC; ++c) {
      const float x0 = xs[c][threadIdx.x], x1 = xs[c][threadIdx.x + 1], x2 = xs[c][threadIdx.x + 2];
      for (int o = 0; o < TO; ++o) acc[o] += ws[o][c][0] * x0 + ws[o][c][1] * x1 + ws[o][c][2] * x2;
    }
    __syncthreads();
  }
  if (l >= L) return;
  for (int o = 0; o < TO; ++o) {
    if (co0 + o < CO) y[((size_t)batch * CO + co0 + o) * L + l] = acc[o] + b[co0 + o];
  }
}
