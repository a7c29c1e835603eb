/*@cuset
launches:
  - {kernel: row_sum, grid: [M], block: [256], args: [x, y, M, N]}
*/
// @rule: an atomic on a 4-byte word needs a 4-byte-aligned address; atomicAdd 2 bytes off faults
//   ("misaligned address") however the rest of the kernel behaves.
// @expect: runtime_error
// @expect-reason: misaligned address
extern "C" __global__ void row_sum(const float* x, float* y, int M, int N) {
  __shared__ int scratch[4];
  if (threadIdx.x == 0) scratch[0] = scratch[1] = 0;
  __syncthreads();
  atomicAdd(reinterpret_cast<int*>(reinterpret_cast<char*>(scratch) + 2), 1);
  float s = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) s += x[(size_t)blockIdx.x * N + i];
  atomicAdd(&y[blockIdx.x], s);
}
