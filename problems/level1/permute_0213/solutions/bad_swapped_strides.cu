/*@cuset
launches:
  - kernel: permute_0213
    grid: [T, H, B]
    block: [128]
    args: [x, y, T, H, D]
*/
// @expect: wrong_answer
// Bug: computes the destination with the source's strides, i.e. copies the tensor unchanged.
extern "C" __global__ void permute_0213(const float* __restrict__ x, float* __restrict__ y, int T, int H, int D) {
  const int t = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const size_t at = (((size_t)b * T + t) * H + h) * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) y[at + d] = x[at + d];
}
