#include "cuset/trainer/allocator_tuning.hpp"

#include <cstdlib>  // defines __GLIBC__ (through <features.h>) where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cuset {

void keepLargeAllocationsMapped() {
#if defined(__GLIBC__)
  // Setting it at all turns the dynamic adjustment off (mallopt(3)); 128 KiB is glibc's own default.
  static const bool once = [] { return mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1; }();
  (void)once;
#endif
}

}  // namespace cuset
