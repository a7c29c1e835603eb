// Shared-memory accesses of a build instrumented for them (SimBuildChecks::sharedAccesses: GCC's
// -fsanitize=kernel-address in call mode, loads and stores, whose hooks in the prelude call
// cuset_sim_shared_access). Two uses, chosen per launch (LaunchOptions::sharedAccesses):
//
//  - a race check, as compute-sanitizer's racecheck does it for shared memory: per byte, the last write
//    and the reads since, stamped with the block's barrier count and the warp's collective count; an
//    access by another thread that conflicts (one of the two writes) with no __syncthreads between
//    them, or no warp collective for two threads of one warp, ends the launch naming both threads, the
//    bytes and the last barrier. The simulator runs each thread to its next barrier, so such a race
//    shows as wrong outputs; this names it.
//  - lockstep: the thread yields to the scheduler before each shared-memory access, which lets every
//    other thread make its access first (block_runner.cpp), as a GPU's warps execute in lockstep: a
//    race only thread-after-thread execution exposes (a reduction reading sdata[0] while thread 0
//    overwrites it) stays hidden, as it does on the GPU KernelBench's check ran on.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "block_runner.hpp"
#include "global_accesses.hpp"

// glibc's: the address of a TLS module's block for the calling thread (declared before the hidden
// visibility below: it is glibc's symbol, not ours).
extern "C" void* __tls_get_addr(void* index);

#pragma GCC visibility push(hidden)
namespace cuset_sim::detail {

void BlockRunner::startSharedAccesses(const LaunchOptions& options, const StaticShared& statics) {
  sharedAccesses_ = options.sharedAccesses;
  epoch_ = 0;
  lastBarrierLine_ = -1;
  const std::size_t n = std::size_t{info_.blockDim.x} * info_.blockDim.y * info_.blockDim.z;
  warpEpochs_.assign((n + 31) / 32, 0);
  if (sharedAccesses_ == SharedAccesses::unchecked) return;
  staticShared_ = 0;
  staticSharedBytes_ = 0;
  if (statics.module != 0 && statics.bytes > 0) {
    struct {
      unsigned long module, offset;
    } index{statics.module, 0};
    staticShared_ = reinterpret_cast<std::uintptr_t>(__tls_get_addr(&index));
    staticSharedBytes_ = statics.bytes;
  }
  if (sharedAccesses_ == SharedAccesses::raceCheck && accesses_.size() < staticSharedBytes_ + info_.dynamicSharedBytes) {
    accesses_.resize(staticSharedBytes_ + info_.dynamicSharedBytes);
  }
}

std::string codeOffset(std::size_t returnAddressOffset) {
  // A return address is the instruction after the call: one byte back is inside the access's line.
  return returnAddressOffset == 0 ? "at an unknown place" : format("@pc:0x%zx@", returnAddressOffset - 1);
}

// A return address in the candidate's library, by its offset in the library file.
std::string codeAddress(const void* pc) {
  Dl_info info{};
  if (pc == nullptr || dladdr(pc, &info) == 0 || info.dli_fbase == nullptr) return codeOffset(0);
  return codeOffset(static_cast<std::size_t>(static_cast<const char*>(pc) - static_cast<const char*>(info.dli_fbase)));
}

std::string BlockRunner::describeSharedByte(std::size_t offset) const {
  if (offset < staticSharedBytes_) return format("byte %zu of the block's static __shared__ memory (%zu bytes)", offset, staticSharedBytes_);
  return format("byte %zu of its dynamic (extern __shared__) memory (%zu bytes)", offset - staticSharedBytes_, info_.dynamicSharedBytes);
}

void BlockRunner::sharedAccess(Lane& lane, std::uintptr_t address, std::size_t size, bool write, const void* pc) {
  if (sharedAccesses_ == SharedAccesses::lockstep) {
    if (!fiberMode_ || !sharedOffset(address)) return;
    lane.state = Lane::State::stepped;
    yield(lane);
    return;
  }
  if (sharedAccesses_ != SharedAccesses::raceCheck) return;
  if (lane.loadCount > 0) settleLoads(lane, false);
  if (!checkAccess(lane, address, size, write, pc)) return;
  if (write) {  // seen: a load of these bytes must not later pass this store off as another, at the load's line
    for (std::size_t i = 0; i < lane.loadCount; ++i) {
      Lane::Load& load = lane.loads[i];
      if (load.address < address + size && address < load.address + load.size) load.size = 0;
    }
    return;
  }
  if (size > sizeof(Lane::Load::bytes)) return;
  Lane::Load& load = lane.loads[lane.nextLoad];
  lane.nextLoad = (lane.nextLoad + 1) % lane.loads.size();
  lane.loadCount = std::min(lane.loadCount + 1, lane.loads.size());
  load.address = address;
  load.size = size;
  load.pc = pc;
  std::memcpy(load.bytes, reinterpret_cast<const void*>(address), size);
}

void BlockRunner::settleLoads(Lane& lane, bool forget) {
  for (std::size_t i = 0; i < lane.loadCount; ++i) {
    Lane::Load& load = lane.loads[i];
    if (std::memcmp(load.bytes, reinterpret_cast<const void*>(load.address), load.size) == 0) continue;
    std::memcpy(load.bytes, reinterpret_cast<const void*>(load.address), load.size);
    checkAccess(lane, load.address, load.size, true, load.pc);
  }
  if (forget) lane.loadCount = lane.nextLoad = 0;
}

std::optional<std::size_t> BlockRunner::sharedOffset(std::uintptr_t address) const {
  const auto dynamic = reinterpret_cast<std::uintptr_t>(info_.dynamicShared);
  if (address >= staticShared_ && address < staticShared_ + staticSharedBytes_) return address - staticShared_;
  if (info_.dynamicSharedBytes > 0 && address >= dynamic && address < dynamic + info_.dynamicSharedBytes) {
    return staticSharedBytes_ + (address - dynamic);
  }
  return std::nullopt;
}

bool BlockRunner::checkAccess(Lane& lane, std::uintptr_t address, std::size_t size, bool write, const void* pc) {
  // Where in the block's shared memory, if there at all (else a global access, global_accesses.cpp).
  const std::optional<std::size_t> shared = sharedOffset(address);
  if (!shared) {
    GlobalAccesses& global = globalAccesses();
    if (!global.watches(address)) return false;
    const std::uint32_t block = info_.blockIdx.x + info_.gridDim.x * (info_.blockIdx.y + info_.gridDim.y * info_.blockIdx.z);
    const std::uint32_t warp = lane.ctx.linear / 32;
    global.access({block, lane.ctx.linear, epoch_, warp < warpEpochs_.size() ? warpEpochs_[warp] : 0}, address, size, write, pc);
    return true;
  }
  const std::uint32_t me = lane.ctx.linear + 1, warp = lane.ctx.linear / 32;
  const std::uint32_t warpEpoch = warpEpochs_[warp];
  // Unordered: the other access is since the last barrier and, within one warp, since the last collective.
  auto unordered = [&](std::uint32_t other, std::uint32_t epoch, std::uint32_t otherWarpEpoch) {
    return other != 0 && other != me && epoch == epoch_ && ((other - 1) / 32 != warp || otherWarpEpoch == warpEpoch);
  };
  const std::size_t end = std::min(*shared + size, accesses_.size());
  for (std::size_t b = *shared; b < end; ++b) {
    AccessRecord& r = accesses_[b];
    if (r.block != info_.serial) r = AccessRecord{info_.serial};
    std::uint32_t other = 0;
    const char* what = nullptr;
    const void* otherPc = nullptr;
    // Lanes of one warp storing to one address with one instruction (the same store, reached in the same
    // warp epoch) are one store on a GPU, one lane's value kept: no race between them. Triton's
    // reductions do it, every lane storing its copy of the warp's result, copies that FP fusion can make
    // differ by an ulp.
    const bool oneStore = write && r.writer != 0 && (r.writer - 1) / 32 == warp && r.writeWarpEpoch == warpEpoch && r.writePc == pc;
    if (!oneStore && unordered(r.writer, r.writeEpoch, r.writeWarpEpoch)) {
      other = r.writer;
      otherPc = r.writePc;
      what = write ? "writes bytes thread %s also wrote" : "reads bytes thread %s wrote";
    } else if (write && r.reader == kManyReaders && r.readEpoch == epoch_) {
      other = kManyReaders;
      otherPc = r.readPc;
      what = "writes bytes other threads read";
    } else if (write && unordered(r.reader, r.readEpoch, r.readWarpEpoch)) {
      other = r.reader;
      otherPc = r.readPc;
      what = "writes bytes thread %s read";
    }
    if (what != nullptr) {
      std::string otherName;
      if (other != kManyReaders) {
        const uint3 t = lanes_[other - 1].ctx.threadIdx;
        otherName = format("(%u,%u,%u)", t.x, t.y, t.z);
      }
      const std::string barrier = lastBarrierLine_ >= 0 ? format("the last __syncthreads completed was at line %d", lastBarrierLine_)
                                                        : std::string("no __syncthreads has completed in this block");
      // "a race in shared memory" is what the evaluator recognises (sim_backend.hpp's kSharedMemoryRace).
      throw SimTrap{
          format("a race in shared memory: this thread %s (%s) with no __syncthreads between the two accesses (%s; this "
                 "access %s, the other %s)",
                 format(what, otherName.c_str()).c_str(), describeSharedByte(b).c_str(), barrier.c_str(), codeAddress(pc).c_str(),
                 codeAddress(otherPc).c_str())};
    }
    if (write) {
      r.writer = me;
      r.writeEpoch = epoch_;
      r.writeWarpEpoch = warpEpoch;
      r.writePc = pc;
      r.reader = 0;
    } else if (r.reader == 0 || r.readEpoch != epoch_ || r.reader == me) {
      r.reader = me;
      r.readEpoch = epoch_;
      r.readWarpEpoch = warpEpoch;
      r.readPc = pc;
    } else if (r.reader != kManyReaders) {
      r.reader = kManyReaders;
      r.readPc = pc;
    }
  }
  return true;
}

}  // namespace cuset_sim::detail
#pragma GCC visibility pop

// Reached from the prelude's load and store hooks in a build instrumented for shared-memory accesses.
extern "C" void cuset_sim_shared_access(std::uintptr_t address, std::size_t size, int write, const void* pc) {
  using namespace cuset_sim::detail;
  cuset_sim::ThreadContext* t = cuset_sim::tls_thread;
  if (t == nullptr || t->impl == nullptr) return;
  Lane& lane = *static_cast<Lane*>(t->impl);
  lane.runner->sharedAccess(lane, address, size, write != 0, pc);
}
