/*@cuset
launches:
  - kernel: minmax_scale
    grid: [M]
    block: [256]
    args: [x, y, N]
*/
// @expect: runtime_error
// @expect-reason: a race in shared memory
// Bug: reuses one shared slot array for the max and the min reductions without a barrier between
// them, so warps can overwrite the max partials before warp-level readers are done.
extern "C" __global__ void minmax_scale(const float* __restrict__ x, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const size_t base = (size_t)blockIdx.x * N;
  float hi = -INFINITY, lo = INFINITY;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    hi = fmaxf(hi, x[base + i]);
    lo = fminf(lo, x[base + i]);
  }
  for (int o = 16; o > 0; o >>= 1) {
    hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = hi;
  __syncthreads();
  float h = -INFINITY;
  for (int w = 0; w < 8; ++w) h = fmaxf(h, scratch[w]);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = lo;
  __syncthreads();
  float l = INFINITY;
  for (int w = 0; w < 8; ++w) l = fminf(l, scratch[w]);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[base + i] = (x[base + i] - l) / (h - l);
}
