/*@cuset
launches:
  - kernel: gemm_add_relu
    grid: [ceil_div(out_features, 16), ceil_div(batch_size, 16)]
    block: [16, 16]
    args: [x, gemm.weight, bias, out, batch_size, in_features, out_features]
*/
// relu(x W^T + bias); W is [out_features, in_features] as nn.Linear keeps it.
extern "C" __global__ void gemm_add_relu(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ bias,
                                         float* __restrict__ y, int B, int K, int N) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= B || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += x[(size_t)row * K + k] * W[(size_t)col * K + k];
  y[(size_t)row * N + col] = fmaxf(acc + bias[col], 0.0f);
}
