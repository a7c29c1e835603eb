/*@cuset
launches:
  - kernel: lstm_cell
    grid: [ceil_div(Hd, 16), ceil_div(B, 16)]
    block: [16, 16]
    args: [x, h, c, W_ih, W_hh, b_ih, b_hh, h_new, c_new, B, I, Hd]
*/
// @expect: wrong_answer
// Bug: reads the gates in the order i, g, f, o (as some frameworks pack them) instead of PyTorch's
// i, f, g, o.
extern "C" __global__ void lstm_cell(const float* __restrict__ x, const float* __restrict__ h, const float* __restrict__ c,
                                     const float* __restrict__ W_ih, const float* __restrict__ W_hh, const float* __restrict__ b_ih,
                                     const float* __restrict__ b_hh, float* __restrict__ h_new, float* __restrict__ c_new, int B, int I, int Hd) {
  const int b = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
  if (b >= B || j >= Hd) return;
  float acc[4];
  for (int g = 0; g < 4; ++g) {
    float s = b_ih[g * Hd + j] + b_hh[g * Hd + j];
    for (int k = 0; k < I; ++k) s += x[(size_t)b * I + k] * W_ih[((size_t)g * Hd + j) * I + k];
    for (int k = 0; k < Hd; ++k) s += h[(size_t)b * Hd + k] * W_hh[((size_t)g * Hd + j) * Hd + k];
    acc[g] = s;
  }
  const float i = 1.0f / (1.0f + expf(-acc[0])), f = 1.0f / (1.0f + expf(-acc[2]));
  const float gg = tanhf(acc[1]), o = 1.0f / (1.0f + expf(-acc[3]));
  const float c2 = f * c[(size_t)b * Hd + j] + i * gg;
  c_new[(size_t)b * Hd + j] = c2;
  h_new[(size_t)b * Hd + j] = o * tanhf(c2);
}
