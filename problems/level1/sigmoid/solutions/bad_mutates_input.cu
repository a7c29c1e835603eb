/*@cuset
launches:
  - kernel: sigmoid
    grid: [ceil_div(M * N, 256)]
    block: [256]
    args: [x, y, M * N]
*/
// @expect: hack_suspected
// Correct output, but the kernel overwrites its input with the result (in-place reuse of x).
extern "C" __global__ void sigmoid(float* x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float r = 1.0f / (1.0f + expf(-x[i]));
  y[i] = r;
  x[i] = r;
}
