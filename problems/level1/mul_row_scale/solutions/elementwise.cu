/*@cuset
launches:
  - kernel: mul_row_scale
    grid: [ceil_div(N, 256), M]
    block: [256]
    args: [x, s, y, N]
*/
// One block row per matrix row: the row's scale is a single broadcast load.
extern "C" __global__ void mul_row_scale(const float* __restrict__ x, const float* __restrict__ s, float* __restrict__ y, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  const size_t i = (size_t)blockIdx.y * N + col;
  y[i] = x[i] * s[blockIdx.y];
}
