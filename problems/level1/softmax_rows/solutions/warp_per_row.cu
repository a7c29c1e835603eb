/*@cuset
launches:
  - kernel: softmax_rows
    grid: [M]
    block: [256]
    shared_bytes: 2 * 8 * 4
    args: [x, y, M, N]
*/
// One block per row. Each thread keeps a running (max, sum) pair over its strided elements (online
// softmax), then the block combines the pairs: warp shuffles first, then one value per warp via
// shared memory.
__device__ __forceinline__ void combine(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  s = s * __expf(m - nm) + os * __expf(om - nm);
  m = nm;
}

extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  extern __shared__ float scratch[];  // [0, 8): warp maxima, [8, 16): warp sums
  const float* row = x + (size_t)blockIdx.x * N;
  float* out = y + (size_t)blockIdx.x * N;
  float m = -INFINITY, s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) combine(m, s, row[i], 1.0f);
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, offset);
    const float os = __shfl_xor_sync(0xffffffffu, s, offset);
    combine(m, s, om, os);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    scratch[warp] = m;
    scratch[8 + warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < 8 ? scratch[lane] : -INFINITY;
    s = lane < 8 ? scratch[8 + lane] : 0.0f;
    for (int offset = 4; offset > 0; offset >>= 1) {
      const float om = __shfl_xor_sync(0xffffffffu, m, offset);
      const float os = __shfl_xor_sync(0xffffffffu, s, offset);
      combine(m, s, om, os);
    }
    if (lane == 0) {
      scratch[0] = m;
      scratch[8] = s;
    }
  }
  __syncthreads();
  const float rowMax = scratch[0];
  const float inv = 1.0f / scratch[8];
  for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = expf(row[i] - rowMax) * inv;
}
