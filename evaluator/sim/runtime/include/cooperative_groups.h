#pragma once
// The simulator's cooperative-groups subset: thread_block and tiled_partition<N> (N a power of two up
// to 32), with sync, ranks, sizes, shuffles and votes, and cg::reduce over tiles.
#include "cuset_sim/prelude.hpp"

namespace cooperative_groups {

class thread_block {
 public:
  void sync() const { ::cuset_sim::block_barrier(::cuset_sim::BlockOp::sync, 0, -1); }
  unsigned thread_rank() const { return ::cuset_sim::tls_thread->linear; }
  unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return {}; }
inline void sync(const thread_block& g) { g.sync(); }

template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tile size must be a power of two up to 32");

 public:
  unsigned thread_rank() const { return ::cuset_sim::tls_thread->linear % N; }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  unsigned meta_group_rank() const { return ::cuset_sim::tls_thread->linear / N; }
  unsigned meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }
  unsigned mask() const {
    const unsigned tileMask = N == 32 ? 0xffffffffu : ((1u << N) - 1u);
    return tileMask << (::cuset_sim::tls_thread->lane / N * N);
  }
  void sync() const { ::cuset_sim::syncwarp(-1, mask()); }
  template <class T>
  T shfl(T v, int src) const {
    return ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_idx>(-1, mask(), v, src, N);
  }
  template <class T>
  T shfl_down(T v, unsigned d) const {
    return ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_down>(-1, mask(), v, static_cast<int>(d), N);
  }
  template <class T>
  T shfl_up(T v, unsigned d) const {
    return ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_up>(-1, mask(), v, static_cast<int>(d), N);
  }
  template <class T>
  T shfl_xor(T v, unsigned m) const {
    return ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_xor>(-1, mask(), v, static_cast<int>(m), N);
  }
  int any(int p) const { return ::cuset_sim::warp_collective(::cuset_sim::WarpOp::any, mask(), p != 0, 0, 32, -1).predicate; }
  int all(int p) const { return ::cuset_sim::warp_collective(::cuset_sim::WarpOp::all, mask(), p != 0, 0, 32, -1).predicate; }
  unsigned ballot(int p) const {
    const unsigned bits = static_cast<unsigned>(::cuset_sim::warp_collective(::cuset_sim::WarpOp::ballot, mask(), p != 0, 0, 32, -1).value);
    return bits >> (::cuset_sim::tls_thread->lane / N * N);
  }
};

template <unsigned N, class Parent>
inline thread_block_tile<N> tiled_partition(const Parent&) {
  return {};
}
template <unsigned N>
inline void sync(const thread_block_tile<N>& g) {
  g.sync();
}

template <class T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};

template <unsigned N, class T, class Op>
inline T reduce(const thread_block_tile<N>& g, T value, Op op) {
  for (unsigned offset = N / 2; offset > 0; offset /= 2) value = op(value, g.shfl_xor(value, offset));
  return value;
}

}  // namespace cooperative_groups
