/*@cuset
launches:
  - kernel: bias_gelu
    grid: [ceil_div(N, 256), M]
    block: [256]
    args: [x, b, y, N]
*/
// @expect: wrong_answer
// Bug: processes the row in pairs (half2) and silently skips the last element of odd-length rows.
extern "C" __global__ void bias_gelu(const __half* __restrict__ x, const __half* __restrict__ b, __half* __restrict__ y, int N) {
  const int c = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (c + 1 >= N) return;
  const size_t i = (size_t)blockIdx.y * N + c;
  for (int k = 0; k < 2; ++k) {
    const float v = __half2float(x[i + k]) + __half2float(b[c + k]);
    y[i + k] = __float2half_rn(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
  }
}
