/*@cuset
launches:
  - kernel: layernorm_rows
    grid: [batch_size * seq_len]
    block: [128]
    args: [x, norm.weight, norm.bias, normed, dim]
  - kernel: linear_gelu
    grid: [ceil_div(hidden, 16), ceil_div(batch_size * seq_len, 16)]
    block: [16, 16]
    args: [normed, fc1.weight, fc1.bias, h, batch_size * seq_len, dim, hidden]
  - kernel: linear_residual
    grid: [ceil_div(dim, 16), ceil_div(batch_size * seq_len, 16)]
    block: [16, 16]
    args: [h, fc2.weight, fc2.bias, x, out, batch_size * seq_len, hidden, dim]
workspace:
  normed: {dtype: float32, shape: [batch_size * seq_len, dim]}
  h: {dtype: float32, shape: [batch_size * seq_len, hidden]}
*/
// LayerNorm (biased variance, eps 1e-5), then fc1 + exact GELU, then fc2 + bias + the residual.
extern "C" __global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ g, const float* __restrict__ b,
                                          float* __restrict__ y, int D) {
  __shared__ float red[128];
  const float* row = x + (size_t)blockIdx.x * D;
  float s = 0.0f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) s += row[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  const float mean = red[0] / D;
  __syncthreads();
  float v = 0.0f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) v += (row[i] - mean) * (row[i] - mean);
  red[threadIdx.x] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  const float inv = rsqrtf(red[0] / D + 1e-5f);
  for (int i = threadIdx.x; i < D; i += blockDim.x) y[(size_t)blockIdx.x * D + i] = (row[i] - mean) * inv * g[i] + b[i];
}

extern "C" __global__ void linear_gelu(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
                                       float* __restrict__ y, int R, int K, int N) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= R || col >= N) return;
  float acc = b[col];
  for (int k = 0; k < K; ++k) acc += x[(size_t)row * K + k] * W[(size_t)col * K + k];
  y[(size_t)row * N + col] = 0.5f * acc * (1.0f + erff(acc * 0.70710678118654752f));
}

extern "C" __global__ void linear_residual(const float* __restrict__ h, const float* __restrict__ W, const float* __restrict__ b,
                                           const float* __restrict__ x, float* __restrict__ y, int R, int K, int N) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= R || col >= N) return;
  float acc = b[col];
  for (int k = 0; k < K; ++k) acc += h[(size_t)row * K + k] * W[(size_t)col * K + k];
  y[(size_t)row * N + col] = x[(size_t)row * N + col] + acc;
}
