#pragma once
// A group copy on the simulator (cooperative_groups::memcpy_async, cuda::memcpy_async with a group):
// every thread of the group calls it with the same arguments and takes an equal share of the bytes.
#include <algorithm>
#include <cstddef>

namespace cuset_sim {

struct GroupShare {
  std::size_t begin, end;
  template <class Group>
  GroupShare(const Group& group, std::size_t bytes) {
    const std::size_t n = group.size(), rank = group.thread_rank(), each = (bytes + n - 1) / n;
    begin = std::min(bytes, rank * each);
    end = std::min(bytes, begin + each);
  }
};

}  // namespace cuset_sim
