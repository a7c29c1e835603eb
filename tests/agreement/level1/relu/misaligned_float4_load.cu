/*@cuset
launches:
  - {kernel: relu, grid: [ceil_div(M*N, 1024)], block: [256], args: [x, y, M*N]}
*/
// @rule: a vector access must be aligned to its size (float4: 16 bytes); a float4 load 4 bytes off
//   16 faults on a GPU ("misaligned address", CUDA C++ Programming Guide, Device Memory Accesses).
// @expect: runtime_error
// @expect-reason: misaligned address
extern "C" __global__ void relu(const float* x, float* y, int n) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 4 < n) {
    // Reads x[i+1 .. i+4]: in bounds, but the address is 4 bytes past a 16-byte boundary.
    const float4 v = *reinterpret_cast<const float4*>(x + i + 1);
    y[i + 1] = fmaxf(v.x, 0.0f);
    y[i + 2] = fmaxf(v.y, 0.0f);
    y[i + 3] = fmaxf(v.z, 0.0f);
    y[i + 4] = fmaxf(v.w, 0.0f);
  }
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
