/*@cuset
launches:
  - kernel: gelu_half2
    grid: [ceil_div(ceil_div(M*N, 2), 256)]
    block: [256]
    args: [x, y, {size: M*N, type: int64}]
*/
// Two halves per thread through __half2 loads (4-byte accesses), math in float32, and a scalar tail
// for odd sizes.
extern "C" __global__ void gelu_half2(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long pair = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long i = 2 * pair;
  if (i + 1 < n) {
    const float2 v = __half22float2(reinterpret_cast<const __half2*>(x)[pair]);
    const float a = 0.5f * v.x * (1.0f + erff(v.x * 0.70710678f));
    const float b = 0.5f * v.y * (1.0f + erff(v.y * 0.70710678f));
    reinterpret_cast<__half2*>(y)[pair] = __floats2half2_rn(a, b);
  } else if (i < n) {
    const float v = __half2float(x[i]);
    y[i] = __float2half_rn(0.5f * v * (1.0f + erff(v * 0.70710678f)));
  }
}
