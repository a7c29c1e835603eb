/*@cuset
launches:
  - kernel: rope
    grid: [H, T, B]
    block: [64]
    args: [q, y, T, H, D]
*/
// @expect: wrong_answer
// Bug: rotates adjacent pairs (2i, 2i + 1), the GPT-J convention, where the problem uses rotate-half.
extern "C" __global__ void rope(const float* __restrict__ q, float* __restrict__ y, int T, int H, int D) {
  const int half = D / 2;
  const size_t base = (((size_t)blockIdx.z * T + blockIdx.y) * H + blockIdx.x) * D;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const double inv = 1.0 / pow(10000.0, (double)i / half);
    const float cf = (float)cos(blockIdx.y * inv), sf = (float)sin(blockIdx.y * inv);
    const float x1 = q[base + 2 * i], x2 = q[base + 2 * i + 1];
    y[base + 2 * i] = x1 * cf - x2 * sf;
    y[base + 2 * i + 1] = x2 * cf + x1 * sf;
  }
}
