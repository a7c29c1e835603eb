/*@cuset
launches:
  - kernel: linear_relu
    grid: [ceil_div(out_features, 16), ceil_div(batch_size, 16)]
    block: [16, 16]
    args: [x, gemm.weight, gemm.bias, out, batch_size, in_features, out_features]
*/
// @expect: wrong_answer
// Ignores the learned scale (as if it were 1, a value seen in many checkpoints): fresh weights
// every trial catch it.
extern "C" __global__ void linear_relu(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
                                       float* __restrict__ y, int B, int K, int N) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= B || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += x[(size_t)row * K + k] * W[(size_t)col * K + k];
  y[(size_t)row * N + col] = fmaxf(acc + b[col], 0.0f);
}
