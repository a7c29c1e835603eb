/*@cuset
launches:
  - {kernel: row_sum, grid: [M], block: [256], args: [x, y, M, N]}
*/
// @rule: alignment holds in every kernel, barriers or not: a float2 load from an odd float index
//   faults ("misaligned address") in a block that also synchronises.
// @expect: runtime_error
// @expect-reason: misaligned address
extern "C" __global__ void row_sum(const float* x, float* y, int M, int N) {
  __shared__ float partial[256];
  const float* row = x + (size_t)blockIdx.x * N;
  float s = 0.0f;
  for (int i = 2 * threadIdx.x + 1; i + 1 < N; i += 2 * blockDim.x) {
    const float2 v = *reinterpret_cast<const float2*>(row + i);
    s += v.x + v.y;
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = 128; half > 0; half >>= 1) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = partial[0] + row[0] + (N % 2 == 0 ? row[N - 1] : 0.0f);
}
