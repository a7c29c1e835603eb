/*@cuset
launches:
  - kernel: cumsum_rows
    grid: [M]
    block: [256]
    args: [x, y, N]
*/
// One block per row, walking it in chunks of 256: a warp-level inclusive scan (shuffles), a scan
// of the 8 warp totals, and a running carry from the previous chunks.
extern "C" __global__ void cumsum_rows(const float* __restrict__ x, float* __restrict__ y, int N) {
  __shared__ float warpTotals[8];
  const float* row = x + (size_t)blockIdx.x * N;
  float* out = y + (size_t)blockIdx.x * N;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float carry = 0.0f;
  for (int base = 0; base < N; base += blockDim.x) {
    const int i = base + threadIdx.x;
    float v = i < N ? row[i] : 0.0f;
    for (int o = 1; o < 32; o <<= 1) {
      const float up = __shfl_up_sync(0xffffffffu, v, o);
      if (lane >= o) v += up;
    }
    if (lane == 31) warpTotals[warp] = v;
    __syncthreads();
    float before = 0.0f, chunk = 0.0f;
    for (int k = 0; k < 8; ++k) {
      if (k < warp) before += warpTotals[k];
      chunk += warpTotals[k];
    }
    if (i < N) out[i] = carry + before + v;
    carry += chunk;
    __syncthreads();  // warpTotals is rewritten by the next chunk
  }
}
