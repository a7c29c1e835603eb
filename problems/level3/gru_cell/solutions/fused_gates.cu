/*@cuset
launches:
  - kernel: gru_cell
    grid: [ceil_div(Hd, 16), ceil_div(B, 16)]
    block: [16, 16]
    args: [x, h, W_ih, W_hh, b_ih, b_hh, h_new, B, I, Hd]
*/
// Each block computes a 16 (batch) x 16 (hidden unit) tile for all gates at once: the input and
// hidden rows are staged 16 features at a time, with the matching rows of every gate's weights, so
// the cell update runs in registers right after the products.
#define TB 16

// The candidate gate needs the input and hidden parts of n separately (r scales only the hidden
// part), so six accumulators are kept: r and z summed over both products, n_x and n_h apart.
extern "C" __global__ void gru_cell(const float* __restrict__ x, const float* __restrict__ h, const float* __restrict__ W_ih,
                                    const float* __restrict__ W_hh, const float* __restrict__ b_ih, const float* __restrict__ b_hh,
                                    float* __restrict__ h_new, int B, int I, int Hd) {
  __shared__ float in[TB][TB + 1];
  __shared__ float wt[3][TB][TB + 1];
  const int b = blockIdx.y * TB + threadIdx.y, j = blockIdx.x * TB + threadIdx.x;
  float acc[2][3] = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};  // [x or h part][gate]
  for (int part = 0; part < 2; ++part) {
    const float* src = part == 0 ? x : h;
    const float* Wm = part == 0 ? W_ih : W_hh;
    const int K = part == 0 ? I : Hd;
    for (int k0 = 0; k0 < K; k0 += TB) {
      const int kk = k0 + threadIdx.x;
      const int rb = blockIdx.y * TB + threadIdx.y;
      in[threadIdx.y][threadIdx.x] = (rb < B && kk < K) ? src[(size_t)rb * K + kk] : 0.0f;
      const int unit = blockIdx.x * TB + threadIdx.y;
      for (int g = 0; g < 3; ++g) wt[g][threadIdx.y][threadIdx.x] = (unit < Hd && kk < K) ? Wm[((size_t)g * Hd + unit) * K + kk] : 0.0f;
      __syncthreads();
      for (int k = 0; k < TB; ++k) {
        const float v = in[threadIdx.y][k];
        for (int g = 0; g < 3; ++g) acc[part][g] = fmaf(v, wt[g][threadIdx.x][k], acc[part][g]);
      }
      __syncthreads();
    }
  }
  if (b >= B || j >= Hd) return;
  const float r = 1.0f / (1.0f + expf(-(acc[0][0] + b_ih[j] + acc[1][0] + b_hh[j])));
  const float z = 1.0f / (1.0f + expf(-(acc[0][1] + b_ih[Hd + j] + acc[1][1] + b_hh[Hd + j])));
  const float n = tanhf(acc[0][2] + b_ih[2 * Hd + j] + r * (acc[1][2] + b_hh[2 * Hd + j]));
  h_new[(size_t)b * Hd + j] = (1.0f - z) * n + z * h[(size_t)b * Hd + j];
}
