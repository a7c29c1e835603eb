/*@cuset
launches:
  - kernel: matmul_bt
    grid: [ceil_div(N, 16), ceil_div(M, 16)]
    block: [16, 16]
    args: [A, B, C, M, N, K]
*/
// @expect: wrong_answer
// @expect-sim: runtime_error
// @expect-sim-reason: out-of-bounds read past the end of input
// Bug: the K loop assumes K is a multiple of 16; with K = 100 the last tile reads into the next
// row's elements instead of zeros, and past the end of A and B for the last rows: a GPU returns
// whatever lies there (memcheck would report it), the simulator's fence page catches the read.
#define TILE 16
extern "C" __global__ void matmul_bt(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  const int bRow = blockIdx.x * TILE + threadIdx.y;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] = row < M ? A[(size_t)row * K + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.x][threadIdx.y] = bRow < N ? B[(size_t)bRow * K + t + threadIdx.x] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
