/*@cuset
launches:
  - kernel: tril_matmul
    grid: [ceil_div(N, 16), ceil_div(N, 16)]
    block: [16, 16]
    args: [A, B, out, N]
*/
// C[i][j] = sum over j <= k <= i of A[i][k] B[k][j]: the inputs are lower triangular (the harness
// applies KernelBench's tril to fresh draws), so half the products are skipped.
extern "C" __global__ void tril_matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  const int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
  if (i >= N || j >= N) return;
  float acc = 0.0f;
  for (int k = j; k <= i; ++k) acc += A[(size_t)i * N + k] * B[(size_t)k * N + j];
  C[(size_t)i * N + j] = i >= j ? acc : 0.0f;
}
