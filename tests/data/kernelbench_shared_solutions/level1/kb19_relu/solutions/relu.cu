/*@cuset
launches:
  - kernel: relu
    grid: [ceil_div(batch_size * dim, 256)]
    block: [256]
    args: [x, out, batch_size * dim]
*/
extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
