/*@cuset
launches:
  - kernel: lstm_cell
    grid: [ceil_div(Hd, 16), ceil_div(B, 16)]
    block: [16, 16]
    args: [x, h, c, W_ih, W_hh, b_ih, b_hh, h_new, c_new, B, I, Hd]
*/
// Each block computes a 16 (batch) x 16 (hidden unit) tile for all gates at once: the input and
// hidden rows are staged 16 features at a time, with the matching rows of every gate's weights, so
// the cell update runs in registers right after the products.
#define TB 16

extern "C" __global__ void lstm_cell(const float* __restrict__ x, const float* __restrict__ h, const float* __restrict__ c,
                                     const float* __restrict__ W_ih, const float* __restrict__ W_hh, const float* __restrict__ b_ih,
                                     const float* __restrict__ b_hh, float* __restrict__ h_new, float* __restrict__ c_new, int B, int I, int Hd) {
  __shared__ float in[TB][TB + 1];      // [batch][feature]
  __shared__ float wt[4][TB][TB + 1];   // [gate][unit][feature]
  const int b = blockIdx.y * TB + threadIdx.y, j = blockIdx.x * TB + threadIdx.x;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int part = 0; part < 2; ++part) {  // x @ W_ih^T, then h @ W_hh^T
    const float* src = part == 0 ? x : h;
    const float* Wm = part == 0 ? W_ih : W_hh;
    const int K = part == 0 ? I : Hd;
    for (int k0 = 0; k0 < K; k0 += TB) {
      const int kk = k0 + threadIdx.x;
      const int rb = blockIdx.y * TB + threadIdx.y;
      in[threadIdx.y][threadIdx.x] = (rb < B && kk < K) ? src[(size_t)rb * K + kk] : 0.0f;
      const int unit = blockIdx.x * TB + threadIdx.y;
      for (int g = 0; g < 4; ++g) wt[g][threadIdx.y][threadIdx.x] = (unit < Hd && kk < K) ? Wm[((size_t)g * Hd + unit) * K + kk] : 0.0f;
      __syncthreads();
      for (int k = 0; k < TB; ++k) {
        const float v = in[threadIdx.y][k];
        for (int g = 0; g < 4; ++g) acc[g] = fmaf(v, wt[g][threadIdx.x][k], acc[g]);
      }
      __syncthreads();
    }
  }
  if (b >= B || j >= Hd) return;
  for (int g = 0; g < 4; ++g) acc[g] += b_ih[g * Hd + j] + b_hh[g * Hd + j];
  const float i = 1.0f / (1.0f + expf(-acc[0])), f = 1.0f / (1.0f + expf(-acc[1]));
  const float gg = tanhf(acc[2]), o = 1.0f / (1.0f + expf(-acc[3]));
  const float c2 = f * c[(size_t)b * Hd + j] + i * gg;
  c_new[(size_t)b * Hd + j] = c2;
  h_new[(size_t)b * Hd + j] = o * tanhf(c2);
}
