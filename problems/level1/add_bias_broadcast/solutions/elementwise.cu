/*@cuset
launches:
  - kernel: add_bias
    grid: [ceil_div(N, 256), M]
    block: [256]
    args: [x, b, y, N]
*/
// A 2-D grid (columns x rows) avoids a division per element; b[col] is read once per thread and
// stays in L1/L2 across rows.
extern "C" __global__ void add_bias(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= N) return;
  const size_t i = (size_t)blockIdx.y * N + col;
  y[i] = x[i] + b[col];
}
