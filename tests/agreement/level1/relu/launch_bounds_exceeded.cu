/*@cuset
launches:
  - {kernel: relu, grid: [ceil_div(M*N, 512)], block: [512], args: [x, y, M*N]}
*/
// @rule: a kernel compiled with __launch_bounds__(128) cannot be launched with more than 128 threads
//   per block: the driver refuses the launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources
//   requested for launch") and nothing runs.
// @expect: runtime_error
// @expect-reason: too many resources requested for launch
extern "C" __global__ void __launch_bounds__(128) relu(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
