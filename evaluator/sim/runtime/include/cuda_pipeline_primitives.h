#pragma once
// Asynchronous global-to-shared copies (cp.async through CUDA's pipeline primitives) on the CPU
// simulator, in place of the toolkit's device-only header.
//
// A copy is recorded, not made: it lands when the thread waits for its batch
// (__pipeline_wait_prior), which is the only point at which CUDA guarantees it has landed. A kernel
// that reads the destination without waiting reads what was there before (deterministically, where a
// GPU would race), and copies never waited for are dropped when the block ends.
#include <cstddef>

#include "cuset_sim/runtime.hpp"

// The copies live in libcuset_sim (memory_spaces.cpp), shared with inline PTX's cp.async.
inline void __pipeline_memcpy_async(void* dst_shared, const void* src_global, std::size_t size_and_align, std::size_t zfill = 0) {
  ::cuset_sim::async_copy(dst_shared, src_global, size_and_align, zfill, __LINE__);
}
inline void __pipeline_commit() { ::cuset_sim::async_commit(); }
// Lands every committed batch but the `prior` most recent ones.
inline void __pipeline_wait_prior(std::size_t prior) { ::cuset_sim::async_wait(prior); }
