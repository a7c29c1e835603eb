#pragma once
// cooperative_groups::memcpy_async / wait / wait_prior on the CPU simulator. Every thread of the group
// calls memcpy_async with the same arguments and records its share of the copy as one asynchronous
// group of its own (memory_spaces.cpp); wait lands this thread's shares and synchronises the group,
// after which the whole copy is visible to it, as CUDA guarantees. Until then the destination keeps
// its old contents.
#include <algorithm>
#include <cstddef>

#include "cooperative_groups.h"

namespace cooperative_groups {

template <class Group, class Size>
inline void memcpy_async(const Group& group, void* dst, const void* src, Size size) {
  const std::size_t bytes = static_cast<std::size_t>(size), n = group.size(), rank = group.thread_rank();
  const std::size_t share = (bytes + n - 1) / n, begin = std::min(bytes, rank * share), end = std::min(bytes, begin + share);
  ::cuset_sim::async_copy_bytes(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
  ::cuset_sim::async_commit();
}
template <class Group>
inline void wait(const Group& group) {
  ::cuset_sim::async_wait(0);
  group.sync();
}
template <unsigned Prior, class Group>
inline void wait_prior(const Group& group) {
  ::cuset_sim::async_wait(Prior);
  group.sync();
}

}  // namespace cooperative_groups
