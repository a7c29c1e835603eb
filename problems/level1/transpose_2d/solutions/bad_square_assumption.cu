/*@cuset
launches:
  - kernel: transpose
    grid: [ceil_div(N, 32), ceil_div(M, 32)]
    block: [32, 8]
    args: [x, y, M, N]
*/
// @expect: runtime_error
// Bug: bounds-checks the output with the input's row/column limits (only right for square matrices),
// so edge tiles write past the end of y (caught by the guard band, or as a crash when far enough).
extern "C" __global__ void transpose(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  for (int k = threadIdx.y; k < 32; k += 8) {
    const int r = blockIdx.y * 32 + k;
    tile[k][threadIdx.x] = (r < M && c < N) ? x[(size_t)r * N + c] : 0.0f;
  }
  __syncthreads();
  const int outCol = blockIdx.y * 32 + threadIdx.x;
  for (int k = threadIdx.y; k < 32; k += 8) {
    const int outRow = blockIdx.x * 32 + k;
    if (outRow < N + 32 && outCol < M) y[(size_t)outRow * M + outCol] = tile[threadIdx.x][k];
  }
}
