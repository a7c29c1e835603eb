#pragma once
// The race check in global memory (SharedAccesses::raceCheck): the trial's buffers, watched per byte
// for accesses by two threads, one of them a write, that nothing orders: two blocks of one launch, or
// two threads of a block with no __syncthreads between them (no warp collective for two threads of a
// warp). Private to libcuset_sim.
//
// What a GPU makes of such a race depends on the schedule, and the simulator's schedule (blocks one
// after another, each thread to its next barrier) hides the commonest: `out[j] += v` by several
// blocks or threads loses updates on a GPU and sums exactly here. So:
//  - a read of bytes another thread wrote, unordered, ends the launch at once (the reader may see
//    either value on a GPU);
//  - a write over bytes another thread wrote or read, unordered, is a race only if it changes them:
//    the bytes before it are kept and compared with what the launch leaves (several threads storing the
//    same value, a common and harmless pattern, are no race);
//  - a kernel that orders its blocks itself (fences with flags, locks, grid sync: the evaluator tells
//    from its source) is checked within each block only, since the check does not model that order.
// Launches run on one host thread while checked: the records are not shared between threads.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuset_sim/runtime.hpp"

#pragma GCC visibility push(hidden)
namespace cuset_sim::detail {

// The thread making an access, as the block runner knows it.
struct GlobalAccessor {
  std::uint32_t block;      // linear block index in the grid
  std::uint32_t thread;     // linear thread index in the block
  std::uint32_t epoch;      // __syncthreads completed in its block
  std::uint32_t warpEpoch;  // collectives completed in its warp
};

class GlobalAccesses {
 public:
  // The shadow memory is 40 bytes per watched byte; buffers past this many bytes in all are not watched.
  static constexpr std::size_t kMaxWatchedBytes = std::size_t{16} << 20;

  void watch(const std::vector<WatchedBuffer>& buffers);
  bool watching() const { return !records_.empty(); }
  bool watches(std::uintptr_t address) const { return bufferAt(address) != nullptr; }
  // Before and after each checked launch; finish returns the race it found (empty: none).
  void start(const LaunchSpec& spec, const LaunchOptions& options);
  std::string finish();
  // Throws SimTrap for a read that races.
  void access(const GlobalAccessor& who, std::uintptr_t address, std::size_t size, bool write, const void* pc);

 private:
  struct Record {
    std::uint32_t launch = 0;                     // launch_ when made; another launch's is stale
    std::uint32_t writeBlock = 0, readBlock = 0;  // block + 1; 0: none; kMany: several
    std::uint16_t writeThread = 0, readThread = 0;
    std::uint32_t writeEpoch = 0, writeWarpEpoch = 0, readEpoch = 0, readWarpEpoch = 0;
    std::uint32_t writePc = 0, readPc = 0;  // offsets in the kernel's library
  };
  static constexpr std::uint32_t kMany = 0xFFFFFFFFu;
  static constexpr std::uint16_t kSeveralThreads = 0xFFFFu;  // no thread of a block (at most 1024) has this index
  // A write over another thread's access, kept until the launch ends: a race if the byte then differs.
  struct Overwrite {
    std::uintptr_t address;
    std::uint8_t before;  // the byte before the write
    bool overRead;        // over another thread's read (else its write)
    std::uint16_t thread, otherThread;
    std::uint32_t block, otherBlock, pc, otherPc;
  };
  static constexpr std::size_t kMaxOverwrites = std::size_t{1} << 20;
  bool ordered(const GlobalAccessor& who, std::uint32_t block, std::uint16_t thread, std::uint32_t epoch, std::uint32_t warpEpoch) const;
  std::string describe(std::uint32_t block, std::uint32_t otherBlock, std::uint32_t otherThread, std::size_t offset, const char* what,
                       std::uint32_t pc, std::uint32_t otherPc) const;
  uint3 blockIndex(std::uint32_t block) const;  // of a linear block index in this launch's grid
  std::string threadName(std::uint32_t block, std::uint32_t thread) const;
  std::string place(std::size_t index) const;  // a record's byte, named by its buffer
  std::uint32_t pcOffset(const void* pc) const;

  // A watched buffer, its bytes' records from records_[first] on (buffers need not be adjacent).
  struct Buffer {
    std::uintptr_t begin = 0;
    std::size_t bytes = 0, first = 0;
    std::string role, name;
  };
  const Buffer* bufferAt(std::uintptr_t address) const;
  std::vector<Buffer> buffers_;  // by address
  std::vector<Record> records_;
  std::unordered_map<std::size_t, Overwrite> overwrites_;  // by record index: the first over each byte
  std::uint32_t launch_ = 0;
  bool acrossBlocks_ = true;
  std::uintptr_t libraryBase_ = 0;
  unsigned grid_[3] = {1, 1, 1}, blockDim_[3] = {1, 1, 1};
};

GlobalAccesses& globalAccesses();

}  // namespace cuset_sim::detail
#pragma GCC visibility pop
