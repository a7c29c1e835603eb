/*@cuset
launches:
  - {kernel: row_sum, grid: [M], block: [256], args: [x, y, M, N]}
*/
// @rule: a __shared__ variable has no initial value: it holds what an earlier block or kernel left.
//   Accumulating into one without zeroing it first is wrong on a GPU, whichever block ran before.
// @expect: wrong_answer
extern "C" __global__ void row_sum(const float* x, float* y, int M, int N) {
  __shared__ float total;
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += x[(size_t)blockIdx.x * N + i];
  __syncthreads();
  atomicAdd(&total, s);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = total;
}
