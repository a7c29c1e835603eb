/*@cuset
launches:
  - kernel: softmax_cols
    grid: [N]
    block: [256]
    args: [S, P, M, N]
  - kernel: bmm_nn
    grid: [ceil_div(D, 16), ceil_div(M, 16), 1]
    block: [16, 16]
    args: [P, V, y, M, D, N, {size: 0, type: int64}, {size: 0, type: int64}, {size: 0, type: int64}]
workspace:
  P: {dtype: float32, shape: [M, N]}
*/
// @expect: wrong_answer
// Bug: normalises over dim 0 (columns) instead of the last dimension.

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

extern "C" __global__ void softmax_cols(const float* __restrict__ S, float* __restrict__ P, int M, int N) {
  __shared__ float scratch[32];
  const int col = blockIdx.x;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < M; i += blockDim.x) m = fmaxf(m, S[(size_t)i * N + col]);
  m = block_max(m, scratch);
  float s = 0.0f;
  for (int i = threadIdx.x; i < M; i += blockDim.x) s += expf(S[(size_t)i * N + col] - m);
  const float inv = 1.0f / block_sum(s, scratch);
  for (int i = threadIdx.x; i < M; i += blockDim.x) P[(size_t)i * N + col] = expf(S[(size_t)i * N + col] - m) * inv;
}

// Batched C = A @ B with 16x16 shared-memory tiles; A is [rows, inner], B is [inner, cols].
extern "C" __global__ void bmm_nn(const float* __restrict__ A, const float* __restrict__ Bm, float* __restrict__ C,
                                  int rows, int cols, int inner, long long strideA, long long strideB, long long strideC) {
  __shared__ float As[16][16];
  __shared__ float Bs[16][17];
  A += blockIdx.z * strideA;
  Bm += blockIdx.z * strideB;
  C += blockIdx.z * strideC;
  const int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < inner; t += 16) {
    As[threadIdx.y][threadIdx.x] = (r < rows && t + threadIdx.x < inner) ? A[(size_t)r * inner + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (t + threadIdx.y < inner && c < cols) ? Bm[(size_t)(t + threadIdx.y) * cols + c] : 0.0f;
    __syncthreads();
    for (int k = 0; k < 16; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (r < rows && c < cols) C[(size_t)r * cols + c] = acc;
}
