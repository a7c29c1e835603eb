/*@cuset
launches:
  - kernel: rope
    grid: [H, T, B]
    block: [64]
    args: [q, y, T, H, D]
*/
// One block per (b, t, h) vector; a thread rotates the pair (i, i + D/2). The angle is formed in
// double precision so large positions keep their accuracy, then sincos runs in double too.
extern "C" __global__ void rope(const float* __restrict__ q, float* __restrict__ y, int T, int H, int D) {
  const int half = D / 2;
  const size_t base = (((size_t)blockIdx.z * T + blockIdx.y) * H + blockIdx.x) * D;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const double inv = 1.0 / pow(10000.0, (double)i / half);
    double s, c;
    sincos((double)blockIdx.y * inv, &s, &c);
    const float cf = (float)c, sf = (float)s;
    const float x1 = q[base + i], x2 = q[base + half + i];
    y[base + i] = x1 * cf - x2 * sf;
    y[base + half + i] = x2 * cf + x1 * sf;
  }
}
