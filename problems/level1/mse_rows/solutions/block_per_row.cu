/*@cuset
launches:
  - kernel: mse_rows
    grid: [M]
    block: [256]
    args: [pred, target, loss, N]
*/
// One block per row; squared differences accumulate in registers, then a warp-shuffle and
// shared-memory reduction.
extern "C" __global__ void mse_rows(const float* __restrict__ pred, const float* __restrict__ target, float* __restrict__ loss, int N) {
  __shared__ float partial[8];
  const size_t base = (size_t)blockIdx.x * N;
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float d = pred[base + i] - target[base + i];
    s = fmaf(d, d, s);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < 8; ++w) total += partial[w];
    loss[blockIdx.x] = total / N;
  }
}
