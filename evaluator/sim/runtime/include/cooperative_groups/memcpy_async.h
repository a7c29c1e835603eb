#pragma once
// cooperative_groups::memcpy_async / wait / wait_prior on the CPU simulator. Every thread of the group
// calls memcpy_async with the same arguments and records its share of the copy as one asynchronous
// group of its own (memory_spaces.cpp); wait lands this thread's shares and synchronises the group,
// after which the whole copy is visible to it, as CUDA guarantees. Until then the destination keeps
// its old contents.
#include <algorithm>
#include <cstddef>

#include "../cooperative_groups.h"
#include "cuset_sim/group_share.hpp"

namespace cooperative_groups {

template <class Group, class Size>
inline void memcpy_async(const Group& group, void* dst, const void* src, Size size) {
  const ::cuset_sim::GroupShare share(group, static_cast<std::size_t>(size));
  ::cuset_sim::async_copy_bytes(static_cast<char*>(dst) + share.begin, static_cast<const char*>(src) + share.begin, share.end - share.begin);
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
