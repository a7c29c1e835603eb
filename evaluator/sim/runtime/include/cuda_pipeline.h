#pragma once
// CUDA's pipeline header on the CPU simulator: the primitives (cuda_pipeline_primitives.h) and the
// C++ nvcuda::experimental::pipeline over them. Copies land only when waited for.
#include <cstddef>

#include "cuda_pipeline_primitives.h"

namespace nvcuda::experimental {

template <std::size_t N, class T>
inline T (*segment(T* p))[N] {
  return reinterpret_cast<T(*)[N]>(p);
}

// One CUDA thread's view of its copies: a batch per commit, numbered from 0.
class pipeline {
 public:
  pipeline() = default;
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;

  std::size_t commit() {
    ::cuset_sim::async_commit();
    return committed_++;
  }
  void commit_and_wait() {
    (void)commit();
    wait_prior<0>();
  }
  // Until batch `batch` has landed: the batches committed after it may stay in flight.
  void wait(std::size_t batch) { ::cuset_sim::async_wait(committed_ > batch ? committed_ - 1 - batch : 0); }
  template <unsigned N>
  void wait_prior() {
    ::cuset_sim::async_wait(N);
  }

 private:
  std::size_t committed_ = 0;
};

template <class T>
inline void memcpy_async(T& dst, const T& src, pipeline&) {
  ::cuset_sim::async_copy_bytes(&dst, &src, sizeof(T));
}
// A 4-, 8- or 16-byte segment, zero-filled past the source's size.
template <class T, std::size_t DstN, std::size_t SrcN>
inline void memcpy_async(T (*dst)[DstN], const T (*src)[SrcN], pipeline&) {
  static_assert(sizeof(*dst) == 4 || sizeof(*dst) == 8 || sizeof(*dst) == 16, "Unsupported copy size.");
  static_assert(sizeof(*src) <= sizeof(*dst), "Source size must be less than or equal to destination size.");
  ::cuset_sim::async_copy(*dst, *src, sizeof(*dst), sizeof(*dst) - sizeof(*src), -1);
}

}  // namespace nvcuda::experimental
