/*@cuset
launches:
  - kernel: row_mean
    grid: [M]
    block: [256]
    args: [x, y, M, N]
*/
// @expect: runtime_error
// @expect-reason: a race in shared memory
// Bug: no barrier between the warps' partial writes and warp 0 reading them: warp 0 may read
// slots that other warps have not written yet.
// One block per row: each thread folds a strided slice (coalesced across the warp), then the warp
// combines with shuffles and the block through one shared slot per warp.
extern "C" __global__ void row_mean(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float sv[32];
  const float* row = x + (size_t)blockIdx.x * N;
  float acc = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const float v = row[i];
    acc += v;
  }
  for (int o = 16; o > 0; o >>= 1) {
    acc += __shfl_xor_sync(0xffffffffu, acc, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) sv[warp] = acc;
  if (warp == 0) {
    acc = lane < blockDim.x / 32 ? sv[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      acc += __shfl_xor_sync(0xffffffffu, acc, o);
    }
    if (lane == 0) y[blockIdx.x] = acc / N;
  }
}
