/*@cuset
launches:
  - kernel: transpose
    grid: [ceil_div(N, 32), ceil_div(M, 32)]
    block: [32, 8]
    args: [x, y, M, N]
*/
// 32x32 tiles through shared memory so both the read of x and the write of y are coalesced; the +1
// column of padding keeps the transposed reads free of bank conflicts.
extern "C" __global__ void transpose(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  for (int k = threadIdx.y; k < 32; k += 8) {
    const int r = blockIdx.y * 32 + k;
    if (r < M && c < N) tile[k][threadIdx.x] = x[(size_t)r * N + c];
  }
  __syncthreads();
  const int outCol = blockIdx.y * 32 + threadIdx.x;  // a row index of x
  for (int k = threadIdx.y; k < 32; k += 8) {
    const int outRow = blockIdx.x * 32 + k;           // a column index of x
    if (outRow < N && outCol < M) y[(size_t)outRow * M + outCol] = tile[threadIdx.x][k];
  }
}
