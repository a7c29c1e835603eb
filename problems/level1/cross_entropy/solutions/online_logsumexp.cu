/*@cuset
launches:
  - kernel: cross_entropy
    grid: [M]
    block: [256]
    args: [logits, target, loss, C]
*/
// One block per sample, one pass over the row: each thread keeps a running (max, sum of exp)
// pair, the pairs are merged across the warp and the block, then loss = max + log(sum) - x[target].
__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  s = (m == -INFINITY ? 0.0f : s * expf(m - nm)) + (om == -INFINITY ? 0.0f : os * expf(om - nm));
  m = nm;
}

extern "C" __global__ void cross_entropy(const float* __restrict__ logits, const long long* __restrict__ target,
                                         float* __restrict__ loss, int C) {
  __shared__ float ms[8], ss[8];
  const float* row = logits + (size_t)blockIdx.x * C;
  float m = -INFINITY, s = 0.0f;
  for (int i = threadIdx.x; i < C; i += blockDim.x) merge(m, s, row[i], 1.0f);
  for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  if (threadIdx.x % 32 == 0) {
    ms[threadIdx.x / 32] = m;
    ss[threadIdx.x / 32] = s;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    m = ms[0];
    s = ss[0];
    for (int w = 1; w < 8; ++w) merge(m, s, ms[w], ss[w]);
    loss[blockIdx.x] = m + logf(s) - row[target[blockIdx.x]];
  }
}
