/*@cuset
launches:
  - kernel: conv1d
    grid: [L, CO, B]
    block: [32]
    args: [x, w, b, y, CI, CO, L]
*/
// @expect: wrong_answer
// Bug: treats padding as "valid" at the left edge only: the tap before position 0 wraps to the last
// element of the previous channel's row instead of reading a zero.
extern "C" __global__ void conv1d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                  float* __restrict__ y, int CI, int CO, int L) {
  const int l = blockIdx.x, co = blockIdx.y, batch = blockIdx.z;
  float s = 0.0f;
  for (int c = threadIdx.x; c < CI; c += 32) {
    const float* row = x + ((size_t)batch * CI + c) * L;
    const float* k = w + ((size_t)co * CI + c) * 3;
    const float left = (batch > 0 || c > 0 || l > 0) ? row[l - 1] : 0.0f;
    const float right = l + 1 < L ? row[l + 1] : 0.0f;
    s += k[0] * left + k[1] * row[l] + k[2] * right;
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x == 0) y[((size_t)batch * CO + co) * L + l] = s + b[co];
}
