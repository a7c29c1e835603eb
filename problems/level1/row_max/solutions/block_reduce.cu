/*@cuset
launches:
  - kernel: row_max
    grid: [M]
    block: [256]
    args: [x, y, M, N]
*/
// One block per row: each thread folds a strided slice (coalesced across the warp), then the warp
// combines with shuffles and the block through one shared slot per warp.
extern "C" __global__ void row_max(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float sv[32];
  const float* row = x + (size_t)blockIdx.x * N;
  float acc = -INFINITY;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float v = row[i];
    acc = fmaxf(acc, v);
  }
  for (int o = 16; o > 0; o >>= 1) {
    acc = fmaxf(acc, __shfl_xor_sync(0xffffffffu, acc, o));
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) sv[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < blockDim.x / 32 ? sv[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) {
      acc = fmaxf(acc, __shfl_xor_sync(0xffffffffu, acc, o));
    }
    if (lane == 0) y[blockIdx.x] = acc;
  }
}
