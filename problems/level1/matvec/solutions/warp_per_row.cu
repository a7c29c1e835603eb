/*@cuset
launches:
  - kernel: matvec
    grid: [ceil_div(M, 8)]
    block: [256]
    args: [A, x, y, M, K]
*/
// A warp per row: the 32 lanes stride along the row (coalesced, the kernel is bandwidth-bound), then
// a shuffle reduction. x stays hot in L1/L2 across rows.
extern "C" __global__ void matvec(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int M, int K) {
  const int row = blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= M) return;  // whole warps leave together: the shuffles below stay convergent
  const float* a = A + (size_t)row * K;
  float s = 0.0f;
  for (int k = lane; k < K; k += 32) s = fmaf(a[k], x[k], s);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) y[row] = s;
}
