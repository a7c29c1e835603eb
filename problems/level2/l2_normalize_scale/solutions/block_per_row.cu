/*@cuset
launches:
  - kernel: l2_normalize
    grid: [M]
    block: [256]
    args: [x, g, y, N]
*/
// One block per row: a sum-of-squares reduction, then one scaled pass.

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

extern "C" __global__ void l2_normalize(const float* __restrict__ x, const float* __restrict__ g, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const size_t base = (size_t)blockIdx.x * N;
  float q = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) q = fmaf(x[base + i], x[base + i], q);
  const float inv = 1.0f / fmaxf(sqrtf(block_sum(q, scratch)), 1e-12f);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[base + i] = x[base + i] * inv * g[i];
}
