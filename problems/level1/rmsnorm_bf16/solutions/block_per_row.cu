/*@cuset
launches:
  - kernel: rmsnorm
    grid: [M]
    block: [256]
    args: [x, w, y, N]
*/
// One block per row, accumulating the sum of squares in float32 from bfloat16 loads.

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

extern "C" __global__ void rmsnorm(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                   __nv_bfloat16* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const __nv_bfloat16* row = x + (size_t)blockIdx.x * N;
  __nv_bfloat16* out = y + (size_t)blockIdx.x * N;
  float q = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float v = __bfloat162float(row[i]);
    q += v * v;
  }
  const float r = rsqrtf(block_sum(q, scratch) / N + 1e-6f);
  for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = __float2bfloat16_rn(__bfloat162float(row[i]) * r * __bfloat162float(w[i]));
}
