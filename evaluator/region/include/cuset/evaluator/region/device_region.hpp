#pragma once
// The memory a kernel sees, laid out the way the correctness checks need it: every buffer (inputs,
// outputs, workspace) 256-byte aligned, as cudaMalloc gives, with guard bands on both sides; outputs
// pre-filled with a canary, workspace zeroed. One contiguous region, so a sandboxed worker can receive
// it, run the kernel on it, and send it back whole for the supervisor to check.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/problem/host_tensor.hpp"

namespace cuset {

inline constexpr std::size_t kBufferAlignment = 256;
inline constexpr std::size_t kGuardBytes = 256;
inline constexpr std::byte kGuardByte{0xCB};

struct BufferSlot {
  enum class Role { input, output, workspace };
  std::string name;
  Role role = Role::input;
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::size_t offset = 0;  // of the data, from the region start
  std::size_t bytes = 0;
  // Filled with zeros before the plan runs (a manifest's workspace; a buffer the candidate allocated
  // with torch::zeros); every other output and scratch buffer is filled with the trial's canary.
  bool zeroed = false;
  // With fences: the page-aligned offset of the inaccessible page next to this buffer's data (0: none).
  // Fences::afterBuffers: the page follows the data, which ends there or up to 15 bytes before it;
  // Fences::beforeBuffers (fenceBefore): the page precedes the data, which starts right after it.
  std::size_t fence = 0;
  bool fenceBefore = false;
};

// "input", "output" or "workspace", as reasons name a buffer.
std::string_view roleName(BufferSlot::Role role);

class RegionLayout {
 public:
  // afterBuffers: each buffer (input, output, workspace) ends at a page boundary followed by a page
  // the sandbox makes inaccessible, so an access past its end faults (what compute-sanitizer's memcheck
  // reports on a GPU). Such a buffer starts 16-byte aligned (256 when its size is a multiple of 256)
  // instead of 256: vector loads stay legal. beforeBuffers: each buffer starts right after such a page
  // (page-aligned), so an access before its start faults. The simulator alternates the two by trial;
  // a GPU run keeps cudaMalloc's alignment.
  enum class Fences { none, afterBuffers, beforeBuffers };
  // Inputs and outputs of `problem`, then the launch plan's scratch buffers, for concrete sizes.
  static RegionLayout plan(const Problem& problem, const LaunchPlan& launchPlan, const SizeBindings& sizes, Fences fences = Fences::none);
  // The page size fences are laid out for.
  static std::size_t fencePageBytes();

  const std::vector<BufferSlot>& slots() const { return slots_; }
  std::size_t totalBytes() const { return totalBytes_; }
  // Whether some buffer's size is not a multiple of 16 bytes: the rest of its last 16-byte granule
  // cannot be fenced (a page there would misalign the buffer's start), so reads of it need checking.
  bool hasTails() const;
  const BufferSlot* find(std::string_view name) const;

  // A region holding `inputs` (problem order), outputs and scratch filled with the trial's canary
  // (outputCanary) or zeros (BufferSlot::zeroed), and guards.
  std::vector<std::byte> fill(const std::vector<HostTensor>& inputs, int trial) const;
  // As memory fresh from cudaMalloc usually reads, and as KernelBench's check meets it: outputs,
  // scratch and the space between buffers all zero.
  std::vector<std::byte> fillFresh(const std::vector<HostTensor>& inputs) const;
  // The first guard band a kernel wrote into, described ("wrote 4 bytes past the end of 'y' ..."), or nullopt.
  std::optional<std::string> findGuardViolation(const std::vector<std::byte>& region) const;
  // The output or input buffer as a host tensor.
  HostTensor extract(const std::vector<std::byte>& region, const BufferSlot& slot) const;

 private:
  std::vector<BufferSlot> slots_;
  std::size_t totalBytes_ = 0;
};

// Canary bytes for a trial's outputs: 0xFF (NaN for floating types, -1 for integers) on even trials,
// 0x7F (a huge finite value) on odd ones, so a kernel that leaves elements unwritten cannot pass by luck.
std::byte outputCanary(int trial, DType dtype);

}  // namespace cuset
