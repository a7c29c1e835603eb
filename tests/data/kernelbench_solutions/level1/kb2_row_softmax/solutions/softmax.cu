/*@cuset
launches:
  - kernel: softmax_rows
    grid: [batch_size]
    block: [256]
    args: [x, out, dim]
*/
// One block per row: a max pass, a sum pass, a write pass, with block reductions in shared memory.
extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float red[256];
  const float* row = x + (size_t)blockIdx.x * n;
  float* out = y + (size_t)blockIdx.x * n;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row[i]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += expf(row[i] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / red[0];
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = expf(row[i] - m) * inv;
}
