/*@cuset
launches:
  - kernel: embedding
    grid: [B * T]
    block: [256]
    args: [idx, table, out, D]
*/
// A block per token copies one table row; the 64-bit id is read once per block and the row copy is
// contiguous on both sides.
extern "C" __global__ void embedding(const long long* __restrict__ idx, const float* __restrict__ table, float* __restrict__ out, int D) {
  const long long id = idx[blockIdx.x];
  const float* src = table + id * D;
  float* dst = out + (size_t)blockIdx.x * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) dst[d] = src[d];
}
