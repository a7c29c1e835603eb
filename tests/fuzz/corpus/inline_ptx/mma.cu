/*@cuset
launches:
  - kernel: matmul_fp16_mma
    grid: [ceil_div(N, 32), ceil_div(M, 32)]
    block: [128]
    args: [A, B, C, M, N, K]
*/
// Tensor cores through PTX: a 4-warp block stages a 32x16 tile of A and a 16x32 tile of B in shared
// memory per K step; each warp loads its 16x16 A fragment with ldmatrix.x4 and the B fragments of two
// 16x8 tiles with ldmatrix.x4.trans (B is k-major in memory, the mma wants it by column), then issues
// two mma.sync.m16n8k16 with float32 accumulators. Fragment layouts are the PTX ISA's. Tiles are
// zero-filled past the matrix edges, so any M and N work; K must be a multiple of 16 only for speed.
extern "C" __global__ void matmul_fp16_mma(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C, int M,
                                           int N, int K) {
  // 16 columns used: 48-byte rows keep every ldmatrix row address 16-byte aligned.
  __shared__ __align__(16) __half As[32][24];
  __shared__ __align__(16) __half Bs[16][40];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / 2, wn = warp % 2;
  const int row0 = blockIdx.y * 32, col0 = blockIdx.x * 32;
  float acc[2][4] = {};
  // ldmatrix.x4: lanes 8i..8i+7 give the row addresses of matrix i.
  const int mat = lane / 8, r = lane % 8;
  const unsigned aRow = static_cast<unsigned>(__cvta_generic_to_shared(&As[wm * 16 + (mat % 2) * 8 + r][(mat / 2) * 8]));
  const unsigned bRow = static_cast<unsigned>(__cvta_generic_to_shared(&Bs[(mat % 2) * 8 + r][wn * 16 + (mat / 2) * 8]));
  const __half zero = __float2half(0.0f);
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = tid; e < 32 * 16; e += 128) {
      const int ar = e / 16, ac = e % 16, br = e / 32, bc = e % 32;
      As[ar][ac] = (row0 + ar < M && k0 + ac < K) ? A[(size_t)(row0 + ar) * K + k0 + ac] : zero;
      Bs[br][bc] = (k0 + br < K && col0 + bc < N) ? B[(size_t)(k0 + br) * N + col0 + bc] : zero;
    }
    __syncthreads();
    unsigned a[4], b[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(aRow));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3]) : "r"(bRow));
    for (int n = 0; n < 2; ++n) {
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                   : "+f"(acc[n][0]), "+f"(acc[n][1]), "+f"(acc[n][2]), "+f"(acc[n][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * n]), "r"(b[2 * n + 1]));
    }
    __syncthreads();
  }
  // The accumulator fragment: element i at row g + 8 * (i / 2), column 2t + i % 2 of each 16x8 tile.
  const int g = lane / 4, t = lane % 4;
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 4; ++i) {
      const int row = row0 + wm * 16 + g + 8 * (i / 2), col = col0 + wn * 16 + n * 8 + 2 * t + i % 2;
      if (row < M && col < N) C[(size_t)row * N + col] = __float2half(acc[n][i]);
    }
  }
}
