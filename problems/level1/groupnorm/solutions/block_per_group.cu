/*@cuset
launches:
  - kernel: groupnorm
    grid: [G, B]
    block: [512]
    args: [x, w, b, y, C, C / G, H * W]
*/
// One block per (batch, group): a group is a contiguous run of (C/G)*H*W elements in NCHW, so the
// mean and centred-variance passes are plain coalesced sweeps.

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

extern "C" __global__ void groupnorm(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                     float* __restrict__ y, int C, int channelsPerGroup, int HW) {
  __shared__ float scratch[32];
  const int count = channelsPerGroup * HW;
  const size_t base = ((size_t)blockIdx.y * C + (size_t)blockIdx.x * channelsPerGroup) * HW;
  const float* in = x + base;
  float* out = y + base;
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += in[i];
  const float mean = block_sum(s, scratch) / count;
  float q = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const float d = in[i] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum(q, scratch) / count + 1e-5f);
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const int c = blockIdx.x * channelsPerGroup + i / HW;
    out[i] = (in[i] - mean) * rstd * w[c] + b[c];
  }
}
