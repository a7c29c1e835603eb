/*@cuset
launches:
  - kernel: linear_relu_scale
    grid: [ceil_div(out_features, 16), ceil_div(batch_size, 16)]
    block: [16, 16]
    args: [x, gemm.weight, gemm.bias, scale, out, batch_size, in_features, out_features]
*/
// y = relu(x W^T + b) * scale in one pass: the weights arrive as inputs, fresh every trial.
extern "C" __global__ void linear_relu_scale(const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
                                             const float* __restrict__ scale, float* __restrict__ y, int B, int K, int N) {
  __shared__ float xs[16][17], ws[16][17];
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  const int wrow = blockIdx.x * 16 + threadIdx.y;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    xs[threadIdx.y][threadIdx.x] = (row < B && k0 + threadIdx.x < K) ? x[(size_t)row * K + k0 + threadIdx.x] : 0.0f;
    ws[threadIdx.y][threadIdx.x] = (wrow < N && k0 + threadIdx.x < K) ? W[(size_t)wrow * K + k0 + threadIdx.x] : 0.0f;
    __syncthreads();
    for (int k = 0; k < 16; ++k) acc += xs[threadIdx.y][k] * ws[threadIdx.x][k];
    __syncthreads();
  }
  if (row < B && col < N) y[(size_t)row * N + col] = fmaxf(acc + b[col], 0.0f) * scale[col];
}
