/*@cuset
launches:
  - kernel: gru_cell
    grid: [ceil_div(Hd, 16), ceil_div(B, 16)]
    block: [16, 16]
    args: [x, h, W_ih, W_hh, b_ih, b_hh, h_new, B, I, Hd]
*/
// @expect: wrong_answer
// Bug: the reset gate scales the hidden product but not its bias b_hn (the "reset before matmul"
// variant of the original GRU paper, not PyTorch's).
extern "C" __global__ void gru_cell(const float* __restrict__ x, const float* __restrict__ h, const float* __restrict__ W_ih,
                                    const float* __restrict__ W_hh, const float* __restrict__ b_ih, const float* __restrict__ b_hh,
                                    float* __restrict__ h_new, int B, int I, int Hd) {
  const int b = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
  if (b >= B || j >= Hd) return;
  float gx[3], gh[3];
  for (int g = 0; g < 3; ++g) {
    float sx = 0.0f, sh = 0.0f;
    for (int k = 0; k < I; ++k) sx += x[(size_t)b * I + k] * W_ih[((size_t)g * Hd + j) * I + k];
    for (int k = 0; k < Hd; ++k) sh += h[(size_t)b * Hd + k] * W_hh[((size_t)g * Hd + j) * Hd + k];
    gx[g] = sx + b_ih[g * Hd + j];
    gh[g] = sh;
  }
  const float r = 1.0f / (1.0f + expf(-(gx[0] + gh[0] + b_hh[j])));
  const float z = 1.0f / (1.0f + expf(-(gx[1] + gh[1] + b_hh[Hd + j])));
  const float n = tanhf(gx[2] + r * gh[2] + b_hh[2 * Hd + j]);
  h_new[(size_t)b * Hd + j] = (1.0f - z) * n + z * h[(size_t)b * Hd + j];
}
