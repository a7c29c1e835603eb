/*@cuset
launches:
  - {kernel: softmax_rows, grid: [M], block: [256], args: [x, y, M, N]}
*/
// @rule: __expf and __fdividef are approximate instructions (ex2.approx after x*log2(e) rounded to
//   float: 2 + 1.173|x| ulp; div.approx: 2 ulp for |y| in [2^-126, 2^126]; CUDA C++ Programming Guide,
//   Intrinsic Functions); after subtracting the row's max, |x| stays small and a softmax built on them
//   is within the problem's tolerance on a GPU.
// @expect: correct
extern "C" __global__ void softmax_rows(const float* x, float* y, int M, int N) {
  __shared__ float scratch[256];
  const float* row = x + (size_t)blockIdx.x * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
  scratch[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    __syncthreads();
  }
  m = scratch[0];
  __syncthreads();
  float sum = 0.0f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) sum += __expf(row[i] - m);
  scratch[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const float total = scratch[0];
  for (int i = threadIdx.x; i < N; i += blockDim.x) y[(size_t)blockIdx.x * N + i] = __fdividef(__expf(row[i] - m), total);
}
