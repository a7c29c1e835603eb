/*@cuset
launches:
  - kernel: block_cumsum
    grid: [ceil_div(batch_size * n_heads * (seq_length / 64), 128)]
    block: [128]
    args: [x, out, batch_size, seq_length, n_heads]
*/
// Cumulative sums within blocks of 64 positions (the problem's block_len), one thread per
// (batch, block, head), walking its block in order.
extern "C" __global__ void block_cumsum(const float* __restrict__ x, float* __restrict__ out, int batch, int seq, int heads) {
  const int blocks = seq / 64;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= batch * blocks * heads) return;
  const int h = t % heads, c = (t / heads) % blocks, b = t / (heads * blocks);
  const long base = ((long)b * seq + (long)c * 64) * heads + h;
  float sum = 0.0f;
  for (int l = 0; l < 64; ++l) {
    sum += x[base + (long)l * heads];
    out[base + (long)l * heads] = sum;
  }
}
