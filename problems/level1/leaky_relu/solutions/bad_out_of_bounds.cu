/*@cuset
launches:
  - kernel: leaky_relu
    grid: [ceil_div(M * N, 128)]
    block: [128]
    args: [x, y, M * N]
*/
// @expect: runtime_error
// @expect-reason: out-of-bounds write
// Bug: no bounds check; the last block writes past the end of y.
extern "C" __global__ void leaky_relu(const float* __restrict__ x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = x[i < n ? i : n - 1];
  y[i] = v > 0.0f ? v : 0.01f * v;
}
