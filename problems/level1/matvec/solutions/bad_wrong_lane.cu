/*@cuset
launches:
  - kernel: matvec
    grid: [ceil_div(M, 8)]
    block: [256]
    args: [A, x, y, M, K]
*/
// @expect: wrong_answer
// Bug: a shfl_down reduction leaves the total in lane 0, but lane 31 writes the result.
extern "C" __global__ void matvec(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int M, int K) {
  const int row = blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= M) return;
  const float* a = A + (size_t)row * K;
  float s = 0.0f;
  for (int k = lane; k < K; k += 32) s = fmaf(a[k], x[k], s);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 31) y[row] = s;
}
