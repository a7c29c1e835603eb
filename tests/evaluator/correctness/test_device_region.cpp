// The device region's layouts: cudaMalloc's 256-byte alignment for a GPU run; on the simulator,
// inputs right against an inaccessible page.
#include <gtest/gtest.h>

#include "cuset/evaluator/correctness/device_region.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace cuset {
namespace {

Problem twoInputs(const std::string& small) {
  return parseProblem("name: t\nlevel: 1\nsizes: {small: {" + small +
                          "}}\ninputs: {a: {dtype: float32, shape: [N]}, b: {dtype: bool, shape: [N]}}\noutputs: {y: {dtype: float32, shape: [N]}}\n"
                          "reference: |\n  def forward(a: Tensor, b: Tensor) -> Tensor:\n      return a\n",
                      "t/problem.yaml", "t");
}

TEST(RegionLayout, InputsEndAgainstAFencePageOnlyWhenAsked) {
  for (const std::string n : {"N: 64", "N: 1000", "N: 1001", "N: 63063", "N: 1"}) {
    const Problem p = twoInputs(n);
    const SizeBindings& sizes = p.sizes("small");
    const RegionLayout gpu = RegionLayout::plan(p, LaunchPlan{}, sizes);
    for (const auto& s : gpu.slots()) {
      EXPECT_EQ(s.offset % kBufferAlignment, 0u) << n;
      EXPECT_EQ(s.fence, 0u);
    }
    const RegionLayout sim = RegionLayout::plan(p, LaunchPlan{}, sizes, RegionLayout::Fences::afterInputs);
    const std::size_t page = RegionLayout::fencePageBytes();
    for (const auto& s : sim.slots()) {
      SCOPED_TRACE(n + " " + s.name);
      if (s.role != BufferSlot::Role::input) {
        EXPECT_EQ(s.fence, 0u);
        EXPECT_EQ(s.offset % kBufferAlignment, 0u);
        continue;
      }
      EXPECT_EQ(s.fence % page, 0u);
      EXPECT_EQ(s.offset % 16, 0u);  // float4 loads stay legal
      if (s.bytes % 256 == 0) EXPECT_EQ(s.offset % 256, 0u);
      EXPECT_LE(s.offset + s.bytes, s.fence);
      EXPECT_LT(s.fence - (s.offset + s.bytes), 16u);
      if (s.bytes % 16 == 0) EXPECT_EQ(s.offset + s.bytes, s.fence);  // the first byte past the end is unreadable
      EXPECT_LE(s.fence + page + kGuardBytes, sim.totalBytes());
    }
    // Buffers never overlap, fences included.
    for (std::size_t i = 1; i < sim.slots().size(); ++i) {
      const auto& prev = sim.slots()[i - 1];
      EXPECT_GE(sim.slots()[i].offset, (prev.fence ? prev.fence + page : prev.offset + prev.bytes) + kGuardBytes);
    }
    // A filled region of this layout passes its own guard check.
    std::vector<HostTensor> inputs;
    inputs.emplace_back(DType::float32, sim.slots()[0].shape);
    inputs.emplace_back(DType::boolean, sim.slots()[1].shape);
    EXPECT_FALSE(sim.findGuardViolation(sim.fill(inputs, 0)).has_value());
  }
}

}  // namespace
}  // namespace cuset
