/*@cuset
launches:
  - {kernel: relu, grid: [ceil_div(M*N, 256)], block: [256], args: [x, y, M*N]}
*/
// @rule: a 64-bit scalar access needs an 8-byte-aligned address; reading two floats as one double
//   starting at an odd float faults ("misaligned address").
// @expect: runtime_error
// @expect-reason: misaligned address
extern "C" __global__ void relu(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 2 == 1 && i + 1 < n) {
    const double pair = *reinterpret_cast<const double*>(x + i);  // x[i], x[i+1], 4 bytes off 8
    float lo, hi;
    memcpy(&lo, &pair, 4);
    memcpy(&hi, reinterpret_cast<const char*>(&pair) + 4, 4);
    y[i] = fmaxf(lo, 0.0f);
    (void)hi;
  } else {
    y[i] = fmaxf(x[i], 0.0f);
  }
}
