/*@cuset
launches:
  - kernel: add_rmsnorm
    grid: [M]
    block: [256]
    args: [x, r, w, h, y, N]
*/
// @expect: wrong_answer
// @expect-reason: h:
// Bug: computes y correctly but never stores h (the fused kernel "forgets" its second output).

// Block-wide reductions: warp shuffles, then one partial per warp through shared memory; every
// thread gets the result. The leading barrier lets the scratch slots be reused by the next call.
__device__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float block_max(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

extern "C" __global__ void add_rmsnorm(const float* __restrict__ x, const float* __restrict__ r, const float* __restrict__ w,
                                       float* __restrict__ h, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const size_t base = (size_t)blockIdx.x * N;
  float q = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float v = x[base + i] + r[base + i];
    q += v * v;
  }
  const float scale = rsqrtf(block_sum(q, scratch) / N + 1e-6f);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[base + i] = (x[base + i] + r[base + i]) * scale * w[i];
}
