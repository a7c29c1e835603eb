#include "cuset/evaluator/region/device_region.hpp"

#include <algorithm>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <unistd.h>

#include "cuset/common/error.hpp"

namespace cuset {
namespace {

std::size_t alignUp(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

}  // namespace

std::string_view roleName(BufferSlot::Role r) {
  switch (r) {
    case BufferSlot::Role::input:
      return "input";
    case BufferSlot::Role::output:
      return "output";
    case BufferSlot::Role::workspace:
      return "workspace";
  }
  return "?";
}

std::byte outputCanary(int trial, DType dtype) {
  if (trial % 2 == 0) return std::byte{0xFF};
  return dtype == DType::boolean ? std::byte{0x00} : std::byte{0x7F};
}

std::size_t RegionLayout::fencePageBytes() {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

RegionLayout RegionLayout::plan(const Problem& problem, const LaunchPlan& launchPlan, const SizeBindings& sizes, Fences fences) {
  RegionLayout layout;
  std::size_t cursor = kGuardBytes;  // front guard of the first buffer
  auto add = [&](const std::string& name, DType dtype, const std::vector<std::int64_t>& shape, BufferSlot::Role role, bool zeroed) {
    BufferSlot slot{.name = name, .role = role, .dtype = dtype, .shape = shape, .offset = cursor, .zeroed = zeroed};
    const auto count = elementCount(shape);
    if (!count) throw makeError("problem {}: buffer '{}': {}", problem.id, name, count.error());
    slot.bytes = static_cast<std::size_t>(*count) * dtypeSize(dtype);
    const std::size_t page = fencePageBytes();
    if (fences == Fences::afterBuffers) {
      // Right-aligned against the fence page: the first byte past the data (past its 16-byte granule
      // when the size is not a multiple of 16) is unreadable.
      const std::size_t span = alignUp(slot.bytes, 16);
      slot.fence = alignUp(cursor + span, page);
      slot.offset = slot.fence - span;
      cursor = slot.fence + page + kGuardBytes;
    } else if (fences == Fences::beforeBuffers) {
      // The front guard band lies in the fence page: the supervisor's copy keeps its bytes, and the
      // child cannot touch them.
      slot.fence = alignUp(cursor, page);
      slot.fenceBefore = true;
      slot.offset = slot.fence + page;
      cursor = alignUp(slot.offset + slot.bytes, kBufferAlignment) + kGuardBytes;
    } else {
      // Back guard from the data end to the next alignment boundary plus a full band; that band is
      // also the next buffer's front guard.
      cursor = alignUp(cursor + slot.bytes, kBufferAlignment) + kGuardBytes;
    }
    layout.slots_.push_back(std::move(slot));
  };
  auto shapeOf = [&](const TensorSpec& t) {
    auto shape = evaluateShape(t, sizes);
    if (!shape) throw makeError("problem {}: {}", problem.id, shape.error());
    return *shape;
  };
  for (const auto& t : problem.inputs) add(t.name, t.dtype, shapeOf(t), BufferSlot::Role::input, false);
  for (const auto& t : problem.outputs) {
    const auto& zeroed = launchPlan.zeroedOutputs;
    add(t.name, t.dtype, shapeOf(t), BufferSlot::Role::output, std::find(zeroed.begin(), zeroed.end(), t.name) != zeroed.end());
  }
  for (const auto& b : launchPlan.scratch) add(b.name, b.dtype, b.shape, BufferSlot::Role::workspace, b.zeroed);
  layout.totalBytes_ = cursor;
  return layout;
}

bool RegionLayout::hasTails() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const BufferSlot& s) { return s.bytes % 16 != 0; });
}

const BufferSlot* RegionLayout::find(std::string_view name) const {
  for (const auto& s : slots_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

namespace {

void copyInputs(const std::vector<BufferSlot>& slots, const std::vector<HostTensor>& inputs, std::vector<std::byte>& region) {
  std::size_t inputIndex = 0;
  for (const auto& s : slots) {
    if (s.role != BufferSlot::Role::input) continue;
    const HostTensor& t = inputs.at(inputIndex++);
    if (t.byteSize() != s.bytes) throw makeError("input '{}' has {} bytes, layout expects {}", s.name, t.byteSize(), s.bytes);
    std::memcpy(region.data() + s.offset, t.data(), s.bytes);
  }
}

}  // namespace

std::vector<std::byte> RegionLayout::fillFresh(const std::vector<HostTensor>& inputs) const {
  std::vector<std::byte> region(totalBytes_, std::byte{0});
  copyInputs(slots_, inputs, region);
  return region;
}

std::vector<std::byte> RegionLayout::fill(const std::vector<HostTensor>& inputs, int trial) const {
  std::vector<std::byte> region(totalBytes_, kGuardByte);
  copyInputs(slots_, inputs, region);
  for (const auto& s : slots_) {
    if (s.role != BufferSlot::Role::input)
      std::memset(region.data() + s.offset, s.zeroed ? 0 : std::to_integer<int>(outputCanary(trial, s.dtype)), s.bytes);
  }
  return region;
}

std::optional<std::string> RegionLayout::findGuardViolation(const std::vector<std::byte>& region) const {
  if (region.size() != totalBytes_) return fmt::format("the worker returned {} bytes of device memory, expected {}", region.size(), totalBytes_);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const BufferSlot& s = slots_[i];
    // Report how many guard bytes changed and how far out the farthest one is: "1 byte past the end"
    // and "2 KiB past the end" are different bugs (an off-by-one versus a wrong stride).
    const std::size_t frontStart = s.offset - kGuardBytes;
    std::size_t changed = 0, farthest = 0;
    for (std::size_t b = frontStart; b < s.offset; ++b) {
      if (region[b] != kGuardByte) {
        ++changed;
        farthest = std::max(farthest, s.offset - b);
      }
    }
    if (changed > 0) {
      return fmt::format("out-of-bounds write before the start of {} '{}': {} guard byte(s) changed, up to {} byte(s) before it", roleName(s.role),
                         s.name, changed, farthest);
    }
    const std::size_t end = s.offset + s.bytes;
    const std::size_t backEnd = alignUp(end, kBufferAlignment) + kGuardBytes;
    for (std::size_t b = end; b < backEnd; ++b) {
      if (region[b] != kGuardByte) {
        ++changed;
        farthest = b - end + 1;
      }
    }
    if (changed > 0) {
      return fmt::format("out-of-bounds write past the end of {} '{}' ({} bytes): {} guard byte(s) changed, up to {} byte(s) past it",
                         roleName(s.role), s.name, s.bytes, changed, farthest);
    }
  }
  return std::nullopt;
}

HostTensor RegionLayout::extract(const std::vector<std::byte>& region, const BufferSlot& slot) const {
  HostTensor t(slot.dtype, slot.shape);
  std::memcpy(t.data(), region.data() + slot.offset, slot.bytes);
  return t;
}

}  // namespace cuset
