/*@cuset
launches:
  - kernel: scale_add_clamp
    grid: [ceil_div(N, 256), M]
    block: [256]
    args: [x, s, t, y, N]
*/
// @expect: wrong_answer
// Bug: clamps before adding the shift, so outputs can leave [-1, 1].
extern "C" __global__ void scale_add_clamp(const float* __restrict__ x, const float* __restrict__ s, const float* __restrict__ t,
                                           float* __restrict__ y, int N) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= N) return;
  const size_t i = (size_t)blockIdx.y * N + c;
  y[i] = fminf(fmaxf(x[i] * s[c], -1.0f), 1.0f) + t[c];
}
