// The device region's layouts: cudaMalloc's 256-byte alignment for a GPU run; on the simulator,
// every buffer right against an inaccessible page, after it or before it.
#include <gtest/gtest.h>

#include "cuset/evaluator/region/device_region.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace cuset {
namespace {

Problem twoInputs(const std::string& small) {
  return parseProblem("name: t\nlevel: 1\nsizes: {small: {" + small +
                          "}}\ninputs: {a: {dtype: float32, shape: [N]}, b: {dtype: bool, shape: [N]}}\noutputs: {y: {dtype: float32, shape: [N]}}\n"
                          "reference: |\n  def forward(a: Tensor, b: Tensor) -> Tensor:\n      return a\n",
                      "t/problem.yaml", "t");
}

TEST(RegionLayout, BuffersLieAgainstAFencePageOnlyWhenAsked) {
  for (const std::string n : {"N: 64", "N: 1000", "N: 1001", "N: 63063", "N: 1"}) {
    const Problem p = twoInputs(n);
    const SizeBindings& sizes = p.sizes("small");
    const RegionLayout gpu = RegionLayout::plan(p, LaunchPlan{}, sizes);
    for (const auto& s : gpu.slots()) {
      EXPECT_EQ(s.offset % kBufferAlignment, 0u) << n;
      EXPECT_EQ(s.fence, 0u);
    }
    const std::size_t page = RegionLayout::fencePageBytes();
    std::vector<HostTensor> inputs;
    inputs.emplace_back(DType::float32, gpu.slots()[0].shape);
    inputs.emplace_back(DType::boolean, gpu.slots()[1].shape);
    for (const auto fences : {RegionLayout::Fences::afterBuffers, RegionLayout::Fences::beforeBuffers}) {
      const bool before = fences == RegionLayout::Fences::beforeBuffers;
      const RegionLayout sim = RegionLayout::plan(p, LaunchPlan{}, sizes, fences);
      ASSERT_EQ(sim.slots().size(), 3u);
      for (const auto& s : sim.slots()) {  // inputs and the output alike
        SCOPED_TRACE(n + " " + s.name + (before ? " before" : " after"));
        ASSERT_NE(s.fence, 0u);
        EXPECT_EQ(s.fenceBefore, before);
        EXPECT_EQ(s.fence % page, 0u);
        EXPECT_EQ(s.offset % 16, 0u);  // float4 loads stay legal
        if (s.bytes % 256 == 0) EXPECT_EQ(s.offset % 256, 0u);
        if (before) {
          EXPECT_EQ(s.offset, s.fence + page);  // the byte before the start is unreadable
        } else {
          EXPECT_LE(s.offset + s.bytes, s.fence);
          EXPECT_LT(s.fence - (s.offset + s.bytes), 16u);
          if (s.bytes % 16 == 0) EXPECT_EQ(s.offset + s.bytes, s.fence);  // the first byte past the end is unreadable
          EXPECT_LE(s.fence + page + kGuardBytes, sim.totalBytes());
        }
      }
      // Buffers never overlap, fences included, and neither do a buffer's guard bands and the next fence.
      for (std::size_t i = 1; i < sim.slots().size(); ++i) {
        const auto& prev = sim.slots()[i - 1];
        const auto& next = sim.slots()[i];
        const std::size_t prevEnd = before ? prev.offset + prev.bytes : prev.fence + page;
        EXPECT_GE(before ? next.fence : next.offset, prevEnd + (before ? 0 : kGuardBytes));
      }
      // A filled region of this layout passes its own guard check.
      EXPECT_FALSE(sim.findGuardViolation(sim.fill(inputs, 0)).has_value());
    }
  }
}

}  // namespace
}  // namespace cuset
