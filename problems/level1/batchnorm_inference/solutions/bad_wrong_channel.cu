/*@cuset
launches:
  - kernel: batchnorm
    grid: [ceil_div(H * W, 256), C, B]
    block: [256]
    args: [x, mean, var, w, b, y, C, H * W]
*/
// @expect: wrong_answer
// Bug: treats the layout as channels-last (channel = flat index % C) while the tensor is NCHW.
extern "C" __global__ void batchnorm(const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ var,
                                     const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int C, int HW) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= HW) return;
  const size_t at = ((size_t)blockIdx.z * C + blockIdx.y) * HW + i;
  const int c = (int)(at % C);
  const float scale = w[c] * rsqrtf(var[c] + 1e-5f);
  y[at] = (x[at] - mean[c]) * scale + b[c];
}
