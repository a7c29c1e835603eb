/*@cuset
launches:
  - kernel: matmul_cp_async
    grid: [ceil_div(N, 16), ceil_div(N, 16)]
    block: [16, 16]
    args: [A, B, C, N]
*/
// Double-buffered tiling with asynchronous copies (PTX cp.async): while the block multiplies the
// tiles of step t from one buffer, the copies of step t + 1 fill the other. Each thread copies one
// float of A and one of B per step (cp.async.ca, 4 bytes; a source size of 0 zero-fills past the
// matrix edge), commits them as a group and waits with cp.async.wait_group 1 for all but the newest
// group before the barrier that makes the tile visible to the whole block.
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
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    __syncthreads();
    const int b = t % 2;
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[b][ty][k], Bs[b][k][tx], acc);
    __syncthreads();  // the next iteration's copies overwrite this buffer
  }
  if (row < N && col < N) C[(size_t)row * N + col] = acc;
}
