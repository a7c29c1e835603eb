// The race check in global memory: global_accesses.hpp says what it reports and why.
#include "global_accesses.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "block_runner.hpp"

#pragma GCC visibility push(hidden)
namespace cuset_sim::detail {

GlobalAccesses& globalAccesses() {
  static GlobalAccesses instance;
  return instance;
}

void GlobalAccesses::watch(const std::vector<WatchedBuffer>& buffers) {
  buffers_.clear();
  records_.clear();
  overwrites_.clear();
  std::size_t total = 0;
  for (const WatchedBuffer& b : buffers) {
    if (b.bytes == 0) continue;
    buffers_.push_back({reinterpret_cast<std::uintptr_t>(b.begin), b.bytes, 0, b.role, b.name});
    total += b.bytes;
  }
  if (total > kMaxWatchedBytes) buffers_.clear();  // too large to watch: unchecked, as before
  std::sort(buffers_.begin(), buffers_.end(), [](const Buffer& a, const Buffer& b) { return a.begin < b.begin; });
  std::size_t first = 0;
  for (Buffer& b : buffers_) {
    b.first = first;
    first += b.bytes;
  }
  records_.assign(first, Record{});
  launch_ = 0;
}

const GlobalAccesses::Buffer* GlobalAccesses::bufferAt(std::uintptr_t address) const {
  auto it = std::upper_bound(buffers_.begin(), buffers_.end(), address, [](std::uintptr_t a, const Buffer& b) { return a < b.begin; });
  if (it == buffers_.begin()) return nullptr;
  --it;
  return address - it->begin < it->bytes ? &*it : nullptr;
}

void GlobalAccesses::start(const LaunchSpec& spec, const LaunchOptions& options) {
  ++launch_;
  overwrites_.clear();
  acrossBlocks_ = options.raceAcrossBlocks;
  std::copy(spec.grid, spec.grid + 3, grid_);
  std::copy(spec.block, spec.block + 3, blockDim_);
  Dl_info info{};
  libraryBase_ = dladdr(reinterpret_cast<const void*>(spec.kernel->invoke), &info) != 0 ? reinterpret_cast<std::uintptr_t>(info.dli_fbase) : 0;
}

std::uint32_t GlobalAccesses::pcOffset(const void* pc) const {
  const auto p = reinterpret_cast<std::uintptr_t>(pc);
  return libraryBase_ != 0 && p > libraryBase_ && p - libraryBase_ < 0xFFFFFFFFu ? static_cast<std::uint32_t>(p - libraryBase_) : 0;
}

uint3 GlobalAccesses::blockIndex(std::uint32_t block) const { return {block % grid_[0], block / grid_[0] % grid_[1], block / (grid_[0] * grid_[1])}; }

std::string GlobalAccesses::threadName(std::uint32_t block, std::uint32_t thread) const {
  return detail::threadName(blockIndex(block),
                            uint3{thread % blockDim_[0], thread / blockDim_[0] % blockDim_[1], thread / (blockDim_[0] * blockDim_[1])});
}

std::string GlobalAccesses::place(std::size_t index) const {
  for (const Buffer& b : buffers_) {
    if (index >= b.first && index < b.first + b.bytes) {
      return format("byte %zu of %s '%s' (%zu bytes)", index - b.first, b.role.c_str(), b.name.c_str(), b.bytes);
    }
  }
  return format("byte %zu of the trial's memory", index);
}

std::string GlobalAccesses::describe(std::uint32_t block, std::uint32_t otherBlock, std::uint32_t otherThread, std::size_t offset, const char* what,
                                     std::uint32_t pc, std::uint32_t otherPc) const {
  const std::string other = otherBlock == kMany              ? std::string("other blocks' threads")
                            : otherThread == kSeveralThreads ? "other threads of " + blockName(blockIndex(otherBlock - 1))
                                                             : threadName(otherBlock - 1, otherThread);
  const char* order =
      otherBlock == kMany || otherBlock - 1 != block ? "nothing orders two blocks of one launch" : "no __syncthreads between the two accesses";
  // "a race in global memory" is what the evaluator recognises (sim_backend.hpp's kGlobalMemoryRace).
  return format("a race in global memory: this thread %s %s (%s; %s; this access %s, the other %s)", what, other.c_str(), place(offset).c_str(),
                order, codeOffset(pc).c_str(), codeOffset(otherPc).c_str());
}

bool GlobalAccesses::ordered(const GlobalAccessor& who, std::uint32_t block, std::uint16_t thread, std::uint32_t epoch,
                             std::uint32_t warpEpoch) const {
  if (block == 0) return true;  // nobody
  if (block == kMany) return !acrossBlocks_;
  if (block - 1 != who.block) return !acrossBlocks_;
  if (thread == who.thread) return true;
  if (epoch != who.epoch) return true;                                  // a __syncthreads between them
  return thread / 32 == who.thread / 32 && warpEpoch != who.warpEpoch;  // a collective of their warp
}

void GlobalAccesses::access(const GlobalAccessor& who, std::uintptr_t address, std::size_t size, bool write, const void* pc) {
  const Buffer* buffer = bufferAt(address);
  if (buffer == nullptr) return;
  // The bytes of this buffer the access covers (one reaching past its end is another check's finding).
  const std::size_t first = buffer->first + (address - buffer->begin), end = buffer->first + std::min(address - buffer->begin + size, buffer->bytes);
  const std::uint32_t me = who.block + 1;
  const std::uint32_t here = pcOffset(pc);
  for (std::size_t b = first; b < end; ++b) {
    Record& r = records_[b];
    if (r.launch != launch_) r = Record{.launch = launch_};
    if (!write) {
      if (!ordered(who, r.writeBlock, r.writeThread, r.writeEpoch, r.writeWarpEpoch)) {
        throw SimTrap{describe(who.block, r.writeBlock, r.writeThread, b, "reads bytes written by", here, r.writePc)};
      }
      if (r.readBlock == 0 || (r.readBlock == me && r.readThread == who.thread)) {
        r.readBlock = me;
        r.readThread = static_cast<std::uint16_t>(who.thread);
        r.readEpoch = who.epoch;
        r.readWarpEpoch = who.warpEpoch;
        r.readPc = here;
      } else if (r.readBlock != me) {
        r.readBlock = kMany;  // readers in several blocks: a later write conflicts with one of them
        r.readPc = here;
      } else if (r.readEpoch != who.epoch) {  // the earlier reads are ordered before this one's interval
        r.readThread = static_cast<std::uint16_t>(who.thread);
        r.readEpoch = who.epoch;
        r.readWarpEpoch = who.warpEpoch;
        r.readPc = here;
      } else if (r.readThread != who.thread) {
        r.readThread = kSeveralThreads;  // no thread of the block is ordered after all of them
        r.readPc = here;
      }
      continue;
    }
    const bool overWrite = !ordered(who, r.writeBlock, r.writeThread, r.writeEpoch, r.writeWarpEpoch);
    const bool overRead =
        !overWrite && !(r.readBlock == me && r.readThread == who.thread) && !ordered(who, r.readBlock, r.readThread, r.readEpoch, r.readWarpEpoch);
    if ((overWrite || overRead) && overwrites_.size() < kMaxOverwrites) {
      const std::uintptr_t at = buffer->begin + (b - buffer->first);
      overwrites_.try_emplace(b, Overwrite{at, *reinterpret_cast<const std::uint8_t*>(at), overRead, static_cast<std::uint16_t>(who.thread),
                                           overWrite ? r.writeThread : r.readThread, who.block, overWrite ? r.writeBlock : r.readBlock, here,
                                           overWrite ? r.writePc : r.readPc});
    }
    r.writeBlock = me;
    r.writeThread = static_cast<std::uint16_t>(who.thread);
    r.writeEpoch = who.epoch;
    r.writeWarpEpoch = who.warpEpoch;
    r.writePc = here;
    r.readBlock = 0;
  }
}

std::string GlobalAccesses::finish() {
  const Overwrite* found = nullptr;
  std::size_t at = 0;
  for (const auto& [offset, o] : overwrites_) {
    if (*reinterpret_cast<const std::uint8_t*>(o.address) == o.before) continue;  // the same value stored again
    if (found == nullptr || offset < at) {
      found = &o;
      at = offset;
    }
  }
  std::string race;
  if (found != nullptr) {
    race = threadName(found->block, found->thread) + ": " +
           describe(found->block, found->otherBlock, found->otherThread, at,
                    found->overRead ? "changes bytes read by" : "changes bytes also written by", found->pc, found->otherPc);
  }
  overwrites_.clear();
  return race;
}

}  // namespace cuset_sim::detail
#pragma GCC visibility pop

namespace cuset_sim {
void watch_global_buffers(const std::vector<WatchedBuffer>& buffers) { detail::globalAccesses().watch(buffers); }
}  // namespace cuset_sim
