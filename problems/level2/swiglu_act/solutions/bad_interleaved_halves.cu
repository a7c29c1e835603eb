/*@cuset
launches:
  - kernel: swiglu
    grid: [ceil_div(F, 256), M]
    block: [256]
    args: [u, y, F]
*/
// @expect: wrong_answer
// Bug: assumes gate and up are interleaved (u[2c], u[2c+1]) rather than concatenated halves.
extern "C" __global__ void swiglu(const float* __restrict__ u, float* __restrict__ y, int F) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= F) return;
  const float* row = u + (size_t)blockIdx.y * 2 * F;
  const float g = row[2 * c];
  y[(size_t)blockIdx.y * F + c] = g / (1.0f + expf(-g)) * row[2 * c + 1];
}
