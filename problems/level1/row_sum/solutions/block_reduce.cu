/*@cuset
launches:
  - kernel: row_sum
    grid: [M]
    block: [256]
    args: [x, y, M, N]
*/
// One block per row: strided partial sums, warp-shuffle reduction, then one partial per warp in
// static shared memory.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float partial[8];
  const float* row = x + (size_t)blockIdx.x * N;
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += row[i];
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_down_sync(0xffffffffu, s, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < 8 ? partial[threadIdx.x] : 0.0f;
    for (int offset = 4; offset > 0; offset >>= 1) s += __shfl_down_sync(0xffffffffu, s, offset);
    if (threadIdx.x == 0) y[blockIdx.x] = s;
  }
}
