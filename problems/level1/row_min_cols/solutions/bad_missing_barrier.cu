/*@cuset
launches:
  - kernel: col_min
    grid: [ceil_div(N, 32)]
    block: [32, 8]
    args: [x, y, M, N]
*/
// @expect: runtime_error
// @expect-reason: a race in shared memory
// Bug: the partial minima are combined before every thread row has written its slot (no barrier).
extern "C" __global__ void col_min(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float part[8][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  float m = INFINITY;
  if (col < N) {
    for (int r = threadIdx.y; r < M; r += 8) m = fminf(m, x[(size_t)r * N + col]);
  }
  part[threadIdx.y][threadIdx.x] = m;
  if (threadIdx.y == 0 && col < N) {
    for (int k = 1; k < 8; ++k) m = fminf(m, part[k][threadIdx.x]);
    y[col] = m;
  }
}
