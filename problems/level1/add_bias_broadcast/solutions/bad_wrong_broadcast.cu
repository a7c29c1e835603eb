/*@cuset
launches:
  - kernel: add_bias
    grid: [ceil_div(N, 256), M]
    block: [256]
    args: [x, b, y, N]
*/
// @expect: wrong_answer
// Bug: broadcasts b along the wrong axis (indexes it by row), a classic shape slip.
extern "C" __global__ void add_bias(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  const size_t i = (size_t)blockIdx.y * N + col;
  y[i] = x[i] + b[blockIdx.y];
}
