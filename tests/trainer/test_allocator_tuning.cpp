// The trainer's allocator setting (allocator_tuning.hpp): after it, a large block lives in a mapping of
// its own (returned to the system when freed), whatever blocks were freed before.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "cuset/trainer/allocator_tuning.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cuset {
namespace {

TEST(AllocatorTuning, LargeBlocksAreMappedEvenAfterLargeFrees) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "not glibc's malloc";
#else
  keepLargeAllocationsMapped();
  // Freeing mapped blocks is what raised glibc's dynamic threshold (up to 32 MiB); it must stay put.
  for (int i = 0; i < 4; ++i) std::free(std::malloc(8u << 20));
  const auto before = mallinfo2().hblks;
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(std::malloc(1u << 20));
  EXPECT_EQ(mallinfo2().hblks, before + 4);
  for (void* p : blocks) std::free(p);
  EXPECT_EQ(mallinfo2().hblks, before);
#endif
}

}  // namespace
}  // namespace cuset
