/*@cuset
launches:
  - kernel: residual_layernorm
    grid: [M]
    block: [256]
    args: [x, r, w, b, y, N]
*/
// One block per row: the sum x + r is formed on the fly in every pass, never written to memory.

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

extern "C" __global__ void residual_layernorm(const float* __restrict__ x, const float* __restrict__ r, const float* __restrict__ w,
                                              const float* __restrict__ b, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const size_t base = (size_t)blockIdx.x * N;
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += x[base + i] + r[base + i];
  const float mean = block_sum(s, scratch) / N;
  float q = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float d = x[base + i] + r[base + i] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum(q, scratch) / N + 1e-5f);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[base + i] = (x[base + i] + r[base + i] - mean) * rstd * w[i] + b[i];
}
