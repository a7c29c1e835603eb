/*@cuset
launches:
  - {kernel: relu, grid: [ceil_div(M*N, 1024)], block: [1024], args: [x, y, M*N]}
*/
// @rule: a block's threads share the SM's 65536 registers, allocated per warp in units of 256: a
//   kernel that needs over 64 registers per thread cannot run 1024 threads per block, and the driver
//   refuses the launch ("too many resources requested for launch").
// @expect: runtime_error
// @expect-reason: too many resources requested for launch
extern "C" __global__ void relu(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // 80 values, each needed until the end: more than 64 registers per thread.
  float v[80];
#pragma unroll
  for (int k = 0; k < 80; ++k) v[k] = x[(i + k * 97) % n];
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 80; ++k) acc = acc * v[k] + v[79 - k];
#pragma unroll
  for (int k = 0; k < 80; ++k) acc += v[k] * v[k];
  y[i] = fmaxf(x[i], 0.0f);
  if (acc == 1.2345e30f) y[i] = acc;  // keeps the values live; never true for these inputs
}
