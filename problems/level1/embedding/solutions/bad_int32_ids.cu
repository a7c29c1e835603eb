/*@cuset
launches:
  - kernel: embedding
    grid: [B * T]
    block: [256]
    args: [idx, table, out, D]
*/
// @expect: wrong_answer
// Bug: reads the int64 ids as 32-bit integers: token t gets the low or high half of id t/2.
extern "C" __global__ void embedding(const int* __restrict__ idx, const float* __restrict__ table, float* __restrict__ out, int D) {
  const int id = idx[blockIdx.x];
  const float* src = table + (size_t)id * D;
  float* dst = out + (size_t)blockIdx.x * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) dst[d] = src[d];
}
