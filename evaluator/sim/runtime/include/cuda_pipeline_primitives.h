#pragma once
// Asynchronous global-to-shared copies (cp.async through CUDA's pipeline primitives) on the CPU
// simulator, in place of the toolkit's device-only header.
//
// A copy is recorded, not made: it lands when the thread waits for its batch
// (__pipeline_wait_prior), which is the only point at which CUDA guarantees it has landed. A kernel
// that reads the destination without waiting reads what was there before (deterministically, where a
// GPU would race), and copies never waited for are dropped when the block ends.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuset_sim/runtime.hpp"

namespace cuset_sim::pipeline_detail {

struct Copy {
  void* dst;
  const void* src;
  std::size_t bytes, zeros;
};

struct ThreadPipeline {
  std::vector<Copy> open;                  // since the last commit
  std::vector<std::vector<Copy>> batches;  // committed, oldest first
};

// This CUDA thread's pipeline (a host thread runs one block at a time; `serial` tells blocks apart).
inline ThreadPipeline& current() {
  static thread_local std::uint64_t serial = 0;
  static thread_local std::vector<ThreadPipeline> threads;
  const ThreadContext* t = tls_thread;
  if (serial != t->block->serial) {
    threads.clear();
    serial = t->block->serial;
  }
  const std::size_t n = static_cast<std::size_t>(blockDim.x) * blockDim.y * blockDim.z;  // the prelude's built-ins
  if (threads.size() < n) threads.resize(n);
  return threads[t->linear];
}

inline void land(const std::vector<Copy>& batch) {
  for (const Copy& c : batch) {
    std::memcpy(c.dst, c.src, c.bytes - c.zeros);
    std::memset(static_cast<char*>(c.dst) + (c.bytes - c.zeros), 0, c.zeros);
  }
}

}  // namespace cuset_sim::pipeline_detail

inline void __pipeline_memcpy_async(void* dst_shared, const void* src_global, std::size_t size_and_align, std::size_t zfill = 0) {
  if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16) {
    ::cuset_sim::trap("__pipeline_memcpy_async: size_and_align must be 4, 8 or 16", __LINE__);
  }
  if (zfill > size_and_align) ::cuset_sim::trap("__pipeline_memcpy_async: zfill larger than the copy", __LINE__);
  if (reinterpret_cast<std::uintptr_t>(dst_shared) % size_and_align != 0 || reinterpret_cast<std::uintptr_t>(src_global) % size_and_align != 0) {
    ::cuset_sim::trap("__pipeline_memcpy_async: misaligned address (both must be aligned to the copy size)", __LINE__);
  }
  ::cuset_sim::pipeline_detail::current().open.push_back({dst_shared, src_global, size_and_align, zfill});
}

inline void __pipeline_commit() {
  auto& p = ::cuset_sim::pipeline_detail::current();
  p.batches.push_back(std::move(p.open));
  p.open.clear();
}

// Lands every committed batch but the `prior` most recent ones.
inline void __pipeline_wait_prior(std::size_t prior) {
  auto& p = ::cuset_sim::pipeline_detail::current();
  while (p.batches.size() > prior) {
    ::cuset_sim::pipeline_detail::land(p.batches.front());
    p.batches.erase(p.batches.begin());
  }
}
