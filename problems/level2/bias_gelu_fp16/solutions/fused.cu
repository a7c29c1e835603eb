/*@cuset
launches:
  - kernel: bias_gelu
    grid: [ceil_div(N, 256), M]
    block: [256]
    args: [x, b, y, N]
*/
// The bias add and GELU in float32 registers, one float16 read and write per element.
extern "C" __global__ void bias_gelu(const __half* __restrict__ x, const __half* __restrict__ b, __half* __restrict__ y, int N) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= N) return;
  const size_t i = (size_t)blockIdx.y * N + c;
  const float v = __half2float(x[i]) + __half2float(b[c]);
  y[i] = __float2half_rn(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
}
