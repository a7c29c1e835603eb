/*@cuset
launches:
  - kernel: scores
    grid: [ceil_div(T, 16), ceil_div(T, 16), B]
    block: [16, 16]
    args: [Q, K, P, T, D]
  - kernel: softmax_rows
    grid: [B * T]
    block: [256]
    args: [P, T]
*/
// @expect: wrong_answer
// Bug: forgets the 1/sqrt(D) temperature, so the distribution is far too peaked.

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

extern "C" __global__ void scores(const float* __restrict__ Q, const float* __restrict__ K, float* __restrict__ P, int T, int D) {
  const size_t b = blockIdx.z;
  const int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
  if (i >= T || j >= T) return;
  float acc = 0.0f;
  for (int k = 0; k < D; ++k) acc = fmaf(Q[(b * T + i) * D + k], K[(b * T + j) * D + k], acc);
  P[(b * T + i) * T + j] = acc;
}

// Row softmax in place, one block per row (max, sum of exponentials, scale).
extern "C" __global__ void softmax_rows(float* __restrict__ p, int N) {
  __shared__ float scratch[32];
  float* row = p + (size_t)blockIdx.x * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
  m = block_max(m, scratch);
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += expf(row[i] - m);
  const float inv = 1.0f / block_sum(s, scratch);
  for (int i = threadIdx.x; i < N; i += blockDim.x) row[i] = expf(row[i] - m) * inv;
}
