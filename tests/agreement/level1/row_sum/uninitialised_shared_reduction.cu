/*@cuset
launches:
  - {kernel: row_sum, grid: [M], block: [256], args: [x, y, M, N], shared_bytes: 2048}
*/
// @rule: shared memory is not initialised when a block starts: it holds whatever an earlier block or
//   kernel left there. This tree reduction sizes its dynamic shared memory for 512 partials but
//   writes only 256, then reads all 512.
// @expect: wrong_answer
extern "C" __global__ void row_sum(const float* x, float* y, int M, int N) {
  extern __shared__ float partial[];
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += x[(size_t)blockIdx.x * N + i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = 256; half > 0; half >>= 1) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = partial[0];
}
