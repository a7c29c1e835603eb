/*@cuset
launches:
  - kernel: bmm
    grid: [ceil_div(N, 16), ceil_div(M, 16), BT]
    block: [16, 16]
    args: [A, B, C, M, N, K]
*/
// @expect: wrong_answer
// Bug: advances B by the wrong batch stride (M*N instead of K*N), so batches after the first
// multiply with a misaligned slice of B.
#define TILE 16
extern "C" __global__ void bmm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  const size_t batch = blockIdx.z;
  A += batch * M * K;
  B += batch * M * N;
  C += batch * M * N;
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[(size_t)row * K + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (t + threadIdx.y < K && col < N) ? B[(size_t)(t + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
