/*@cuset
launches:
  - kernel: masked_softmax
    grid: [M]
    block: [256]
    args: [x, mask, y, N]
*/
// @expect: wrong_answer
// Bug: zeroes the masked outputs but normalises by the sum over the whole row, masked elements
// included, so the kept probabilities no longer sum to one.

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

extern "C" __global__ void masked_softmax(const float* __restrict__ x, const bool* __restrict__ mask, float* __restrict__ y, int N) {
  __shared__ float scratch[32];
  const size_t base = (size_t)blockIdx.x * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, x[base + i]);
  m = block_max(m, scratch);
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += expf(x[base + i] - m);
  const float inv = 1.0f / block_sum(s, scratch);
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[base + i] = mask[base + i] ? expf(x[base + i] - m) * inv : 0.0f;
}
