/*@cuset
launches:
  - kernel: permute_0213
    grid: [T, H, B]
    block: [128]
    args: [x, y, T, H, D]
*/
// The innermost dimension D is kept, so each (b, t, h) row of D elements is one contiguous,
// coalesced copy; a block per row, threads striding over D.
extern "C" __global__ void permute_0213(const float* __restrict__ x, float* __restrict__ y, int T, int H, int D) {
  const int t = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const float* src = x + (((size_t)b * T + t) * H + h) * D;
  float* dst = y + (((size_t)b * H + h) * T + t) * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) dst[d] = src[d];
}
