/*@cuset
launches:
  - kernel: conv_relu_pool
    grid: [ceil_div(W / 2, 8), ceil_div(H / 2, 8), B * CO]
    block: [8, 8]
    args: [x, w, b, y, CI, CO, H, W]
*/
// Each thread computes the 2x2 convolution outputs under one pooled output and keeps their maximum;
// the block's 18x18 input patch per channel (16x16 conv outputs plus halo) is staged in shared
// memory. relu(max(.)) == max(relu(.)), so the ReLU is applied once, after pooling.
extern "C" __global__ void conv_relu_pool(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                          float* __restrict__ y, int CI, int CO, int H, int W) {
  __shared__ float patch[18][18];
  __shared__ float k[9];
  const int OH = H / 2, OW = W / 2;
  const int batch = blockIdx.z / CO, co = blockIdx.z % CO;
  const int px = blockIdx.x * 8 + threadIdx.x, py = blockIdx.y * 8 + threadIdx.y;
  const int tid = threadIdx.y * 8 + threadIdx.x;
  float acc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
  for (int c = 0; c < CI; ++c) {
    const float* plane = x + ((size_t)batch * CI + c) * H * W;
    for (int e = tid; e < 18 * 18; e += 64) {
      const int iy = blockIdx.y * 16 + e / 18 - 1, ix = blockIdx.x * 16 + e % 18 - 1;
      patch[e / 18][e % 18] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? plane[(size_t)iy * W + ix] : 0.0f;
    }
    if (tid < 9) k[tid] = w[((size_t)co * CI + c) * 9 + tid];
    __syncthreads();
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const int cy = 2 * threadIdx.y + dy, cx = 2 * threadIdx.x + dx;  // conv output within the tile
        float s = 0.0f;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) s = fmaf(k[ky * 3 + kx], patch[cy + ky][cx + kx], s);
        acc[dy][dx] += s;
      }
    __syncthreads();
  }
  if (px >= OW || py >= OH) return;
  const float m = fmaxf(fmaxf(acc[0][0], acc[0][1]), fmaxf(acc[1][0], acc[1][1])) + b[co];
  y[(((size_t)batch * CO + co) * OH + py) * OW + px] = fmaxf(m, 0.0f);
}
