/*@cuset
launches:
  - kernel: conv2d_valid
    grid: [ceil_div((height - kernel_size + 1) * (width - kernel_size + 1), 128), out_channels, batch_size]
    block: [128]
    args: [x, conv.weight, conv.bias, y, in_channels, height, width, out_channels, height - kernel_size + 1, width - kernel_size + 1, kernel_size]
  - kernel: channel_stats
    grid: [out_channels]
    block: [256]
    args: [y, stats, batch_size, out_channels, (height - kernel_size + 1) * (width - kernel_size + 1)]
  - kernel: bn_tanh
    grid: [ceil_div((height - kernel_size + 1) * (width - kernel_size + 1), 256), out_channels, batch_size]
    block: [256]
    args: [y, stats, bn.weight, bn.bias, out, out_channels, (height - kernel_size + 1) * (width - kernel_size + 1)]
workspace:
  y: {dtype: float32, shape: [batch_size, out_channels, height - kernel_size + 1, width - kernel_size + 1]}
  stats: {dtype: float32, shape: [out_channels, 2]}
*/
// BatchNorm in training mode normalises with the batch's own statistics (biased variance, eps 1e-5),
// so the running statistics the harness draws are irrelevant to the output.
extern "C" __global__ void conv2d_valid(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                        float* __restrict__ y, int C, int H, int W, int O, int OH, int OW, int KS) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= OH * OW) return;
  const int o = blockIdx.y, n = blockIdx.z, oh = p / OW, ow = p % OW;
  float acc = b[o];
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < KS; ++i)
      for (int j = 0; j < KS; ++j)
        acc += x[(((size_t)n * C + c) * H + oh + i) * W + ow + j] * w[(((size_t)o * C + c) * KS + i) * KS + j];
  y[((size_t)n * O + o) * OH * OW + p] = acc;
}

extern "C" __global__ void channel_stats(const float* __restrict__ y, float* __restrict__ stats, int N, int O, int P) {
  __shared__ float s1[256], s2[256];
  const int o = blockIdx.x;
  float a = 0.0f, q = 0.0f;
  for (int n = 0; n < N; ++n)
    for (int p = threadIdx.x; p < P; p += blockDim.x) {
      const float v = y[((size_t)n * O + o) * P + p];
      a += v;
      q += v * v;
    }
  s1[threadIdx.x] = a;
  s2[threadIdx.x] = q;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) {
      s1[threadIdx.x] += s1[threadIdx.x + k];
      s2[threadIdx.x] += s2[threadIdx.x + k];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const float count = (float)N * P, mean = s1[0] / count;
    stats[2 * o] = mean;
    stats[2 * o + 1] = rsqrtf(fmaxf(s2[0] / count - mean * mean, 0.0f) + 1e-5f);
  }
}

extern "C" __global__ void bn_tanh(const float* __restrict__ y, const float* __restrict__ stats, const float* __restrict__ g,
                                   const float* __restrict__ b, float* __restrict__ out, int O, int P) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= P) return;
  const int o = blockIdx.y;
  const size_t i = ((size_t)blockIdx.z * O + o) * P + p;
  out[i] = tanhf((y[i] - stats[2 * o]) * stats[2 * o + 1] * g[o] + b[o]);
}
