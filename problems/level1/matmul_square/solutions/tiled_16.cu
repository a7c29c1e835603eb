/*@cuset
launches:
  - kernel: matmul_tiled
    grid: [ceil_div(N, 16), ceil_div(N, 16)]
    block: [16, 16]
    args: [A, B, C, N]
*/
// Classic shared-memory tiling: each 16x16 block stages a tile of A and of B per step, so every
// global element is read N/16 times instead of N times. Out-of-range tile entries are zero-filled,
// so any N works.
#define TILE 16

extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];  // +1 avoids bank conflicts on the column reads
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < N; t += TILE) {
    As[threadIdx.y][threadIdx.x] = (row < N && t + threadIdx.x < N) ? A[(size_t)row * N + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (t + threadIdx.y < N && col < N) ? B[(size_t)(t + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < N && col < N) C[(size_t)row * N + col] = acc;
}
