/*@cuset
launches:
  - kernel: col_min
    grid: [ceil_div(N, 32)]
    block: [32, 8]
    args: [x, y, M, N]
*/
// A block owns 32 adjacent columns: each row segment is one coalesced 128-byte load, the 8 thread
// rows split the M rows, and a shared-memory pass combines the 8 partial minima per column.
extern "C" __global__ void col_min(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float part[8][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  float m = INFINITY;
  if (col < N) {
    for (int r = threadIdx.y; r < M; r += 8) m = fminf(m, x[(size_t)r * N + col]);
  }
  part[threadIdx.y][threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.y == 0 && col < N) {
    for (int k = 1; k < 8; ++k) m = fminf(m, part[k][threadIdx.x]);
    y[col] = m;
  }
}
