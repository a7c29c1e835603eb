/*@cuset
launches:
  - kernel: maxpool2d
    grid: [ceil_div(W / 2, 32), H / 2, B * C]
    block: [32]
    args: [x, y, H, W]
*/
// One thread per output; a warp covers 32 adjacent outputs, so its two input rows are read as
// contiguous 256-byte spans.
extern "C" __global__ void maxpool2d(const float* __restrict__ x, float* __restrict__ y, int H, int W) {
  const int OH = H / 2, OW = W / 2;
  const int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y;
  if (ox >= OW) return;
  const float* plane = x + (size_t)blockIdx.z * H * W;
  const float* r0 = plane + (size_t)(2 * oy) * W + 2 * ox;
  const float* r1 = r0 + W;
  y[((size_t)blockIdx.z * OH + oy) * OW + ox] = fmaxf(fmaxf(r0[0], r0[1]), fmaxf(r1[0], r1[1]));
}
