/*@cuset
launches:
  - {kernel: relu, grid: [ceil_div(M*N, 1024)], block: [256], args: [x, y, M*N]}
*/
// @rule: float4 accesses at 16-byte-aligned addresses are legal (buffers start 256-byte aligned, as
//   cudaMalloc gives); the elements past the last whole float4 are done one at a time.
// @expect: correct
extern "C" __global__ void relu(const float* x, float* y, int n) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    const float4 v = *reinterpret_cast<const float4*>(x + i);
    *reinterpret_cast<float4*>(y + i) = make_float4(fmaxf(v.x, 0.0f), fmaxf(v.y, 0.0f), fmaxf(v.z, 0.0f), fmaxf(v.w, 0.0f));
  } else {
    for (int j = i; j < n; ++j) y[j] = fmaxf(x[j], 0.0f);
  }
}
