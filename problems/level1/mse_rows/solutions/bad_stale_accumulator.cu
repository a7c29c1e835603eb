/*@cuset
launches:
  - kernel: mse_rows
    grid: [M]
    block: [256]
    args: [pred, target, loss, N]
*/
// @expect: wrong_answer
// Bug: accumulates into the output with atomicAdd but never clears it first, trusting the buffer to
// start at zero (the harness fills outputs with a canary pattern, as a reused allocation would).
extern "C" __global__ void mse_rows(const float* __restrict__ pred, const float* __restrict__ target, float* __restrict__ loss, int N) {
  const size_t base = (size_t)blockIdx.x * N;
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float d = pred[base + i] - target[base + i];
    s = fmaf(d, d, s);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) atomicAdd(&loss[blockIdx.x], s / N);
}
