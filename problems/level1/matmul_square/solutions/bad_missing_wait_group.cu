/*@cuset
launches:
  - kernel: matmul_cp_async
    grid: [ceil_div(N, 16), ceil_div(N, 16)]
    block: [16, 16]
    args: [A, B, C, N]
*/
// @expect: wrong_answer
// Bug: no cp.async.wait_group before the barrier. The barrier orders the threads' ordinary accesses,
// not the asynchronous copies still in flight, so the tiles may be read before they land (on the
// simulator they never have: copies land only when waited for). Otherwise cp_async_double_buffer.cu.
#define TILE 16

__device__ __forceinline__ void copy_async(float* shared, const float* global, bool inside) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(address), "l"(global), "r"(inside ? 4 : 0));
}

extern "C" __global__ void matmul_cp_async(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
  __shared__ float As[2][TILE][TILE];
  __shared__ float Bs[2][TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  const int steps = (N + TILE - 1) / TILE;
  auto stage = [&](int step, int buffer) {
    const int k = step * TILE;
    const bool inA = row < N && k + tx < N, inB = k + ty < N && col < N;
    copy_async(&As[buffer][ty][tx], inA ? A + (size_t)row * N + k + tx : A, inA);
    copy_async(&Bs[buffer][ty][tx], inB ? B + (size_t)(k + ty) * N + col : B, inB);
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  stage(0, 0);
  float acc = 0.0f;
  for (int t = 0; t < steps; ++t) {
    if (t + 1 < steps) {
      stage(t + 1, (t + 1) % 2);
    } else {
      asm volatile("cp.async.commit_group;" ::: "memory");  // an empty group keeps "all but the newest" right
    }
    __syncthreads();
    const int b = t % 2;
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[b][ty][k], Bs[b][k][tx], acc);
    __syncthreads();  // the next iteration's copies overwrite this buffer
  }
  if (row < N && col < N) C[(size_t)row * N + col] = acc;
}
