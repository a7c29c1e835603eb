#pragma once
// cooperative_groups::inclusive_scan / exclusive_scan over thread_block_tile<N> on the CPU simulator
// (Hillis-Steele over shfl_up, as the device implementation does for tiles). Rank 0's exclusive
// result is a value-initialised T.
#include "../cooperative_groups.h"

namespace cooperative_groups {

template <unsigned N, class T, class Op = plus<T>>
inline T inclusive_scan(const thread_block_tile<N>& g, T value, Op op = Op()) {
  for (unsigned d = 1; d < N; d *= 2) {
    const T other = g.shfl_up(value, d);
    if (g.thread_rank() >= d) value = op(value, other);
  }
  return value;
}

template <unsigned N, class T, class Op = plus<T>>
inline T exclusive_scan(const thread_block_tile<N>& g, T value, Op op = Op()) {
  const T inclusive = inclusive_scan(g, value, op);
  const T previous = g.shfl_up(inclusive, 1);
  return g.thread_rank() == 0 ? T() : previous;
}

}  // namespace cooperative_groups
