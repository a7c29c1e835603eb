/*@cuset
launches:
  - kernel: relu_kernel
    grid: [min(ceil_div(M*N, 256), 65535)]
    block: [256]
    args: [x, y, {size: M*N, type: int64}]
*/
// Grid-stride loop: a bounded grid covers any size, and consecutive threads touch consecutive
// elements, so loads and stores coalesce.
extern "C" __global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}
