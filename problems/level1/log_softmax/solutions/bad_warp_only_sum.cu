/*@cuset
launches:
  - kernel: log_softmax
    grid: [M]
    block: [256]
    args: [x, y, N]
*/
// @expect: wrong_answer
// Bug: the sum of exponentials is reduced within each warp only, so every warp normalises by its own
// eighth of the row.

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

extern "C" __global__ void log_softmax(const float* __restrict__ x, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const float* row = x + (size_t)blockIdx.x * N;
  float* out = y + (size_t)blockIdx.x * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
  m = block_max(m, scratch);
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += expf(row[i] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  const float lse = m + logf(s);
  for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = row[i] - lse;
}
