/*@cuset
launches:
  - kernel: silu
    grid: [ceil_div(M * N, 256)]
    block: [256]
    args: [x, y, M * N]
*/
// @expect: wrong_answer
// Bug: computes x * sigmoid(-x) (a sign slip that still looks like a smooth activation).
extern "C" __global__ void silu(const float* __restrict__ x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + expf(x[i]));
}
