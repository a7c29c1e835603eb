/*@cuset
launches:
  - kernel: matmul_bf16
    grid: [ceil_div(N, 32), ceil_div(M, 32)]
    block: [32, 8]
    args: [A, B, C, M, N, K]
*/
// 32x32 output tile per block; each thread owns 4 rows of one column. Tiles are converted to float
// once when staged, and the product accumulates in float32 (as tensor cores do).
#define TILE 32
extern "C" __global__ void matmul_bf16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                       __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int t = 0; t < K; t += TILE) {
    for (int i = 0; i < 4; ++i) {
      const int r = threadIdx.y + 8 * i;
      const int ar = blockIdx.y * TILE + r, ac = t + threadIdx.x;
      As[r][threadIdx.x] = (ar < M && ac < K) ? __bfloat162float(A[(size_t)ar * K + ac]) : 0.0f;
      const int br = t + r;
      Bs[r][threadIdx.x] = (br < K && col < N) ? __bfloat162float(B[(size_t)br * N + col]) : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < TILE; ++k) {
      const float b = Bs[k][threadIdx.x];
      for (int i = 0; i < 4; ++i) acc[i] = fmaf(As[threadIdx.y + 8 * i][k], b, acc[i]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int row = blockIdx.y * TILE + threadIdx.y + 8 * i;
    if (row < M && col < N) C[(size_t)row * N + col] = __float2bfloat16_rn(acc[i]);
  }
}
