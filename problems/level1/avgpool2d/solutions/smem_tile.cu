/*@cuset
launches:
  - kernel: avgpool2d
    grid: [ceil_div(W, 32), ceil_div(H, 8), B * C]
    block: [32, 8]
    args: [x, y, H, W]
*/
// A 32x8 output tile stages its 34x10 input patch (zero halo) in shared memory once; each input is
// then read by up to nine threads from shared memory instead of global memory.
extern "C" __global__ void avgpool2d(const float* __restrict__ x, float* __restrict__ y, int H, int W) {
  __shared__ float patch[10][34];
  const float* plane = x + (size_t)blockIdx.z * H * W;
  const int tid = threadIdx.y * 32 + threadIdx.x;
  for (int e = tid; e < 10 * 34; e += 256) {
    const int py = e / 34, px = e % 34;
    const int iy = blockIdx.y * 8 + py - 1, ix = blockIdx.x * 32 + px - 1;
    patch[py][px] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? plane[(size_t)iy * W + ix] : 0.0f;
  }
  __syncthreads();
  const int ox = blockIdx.x * 32 + threadIdx.x, oy = blockIdx.y * 8 + threadIdx.y;
  if (ox >= W || oy >= H) return;
  float s = 0.0f;
  for (int dy = 0; dy < 3; ++dy)
    for (int dx = 0; dx < 3; ++dx) s += patch[threadIdx.y + dy][threadIdx.x + dx];
  y[(size_t)blockIdx.z * H * W + (size_t)oy * W + ox] = s / 9.0f;
}
