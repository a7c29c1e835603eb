/*@cuset
launches:
  - kernel: cross_entropy
    grid: [M]
    block: [256]
    args: [logits, target, loss, C]
*/
// @expect: wrong_answer
// Bug: forgets the target term and returns logsumexp(logits) alone.
extern "C" __global__ void cross_entropy(const float* __restrict__ logits, const long long* __restrict__ target,
                                         float* __restrict__ loss, int C) {
  __shared__ float part[8];
  const float* row = logits + (size_t)blockIdx.x * C;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < C; i += blockDim.x) m = fmaxf(m, row[i]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  m = part[0];
  for (int w = 1; w < 8; ++w) m = fmaxf(m, part[w]);
  __syncthreads();
  float s = 0.0f;
  for (int i = threadIdx.x; i < C; i += blockDim.x) s += expf(row[i] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < 8; ++w) total += part[w];
    loss[blockIdx.x] = m + logf(total);
  }
}
