#pragma once
// The CUDA execution model on the CPU: the part of the simulator shared by candidate kernels (compiled
// by the host compiler against prelude.hpp) and the worker that launches them. Built as
// libcuset_sim.so, which both the cuset executable and every candidate library link, so there is one
// copy of its state per process.
//
// A block runs on one host thread; its CUDA threads are fibers (Boost.Context) when the kernel can
// reach a barrier or warp collective, and plain calls otherwise. Blocks are spread over host threads.
#include <vector_types.h>

#include <cstddef>
#include <cstdint>
#ifndef CUSET_SIM_KERNEL_LIBRARY
#include <string>
#include <vector>
#endif

namespace cuset_sim {

struct BlockInfo {
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
  void* dynamicShared;
  std::size_t dynamicSharedBytes;
  // Different for every block a host thread runs, in every launch: per-thread state kept by headers
  // (the pending copies of cuda_pipeline.h) knows when a new block has begun.
  std::uint64_t serial;
};

// Per CUDA thread. `tls_thread` points at the running thread's context on every host thread.
struct ThreadContext {
  uint3 threadIdx;
  const BlockInfo* block;
  unsigned linear;  // linear thread index within the block
  unsigned lane;    // linear % 32
  void* impl;       // scheduler state (runtime.cpp)
};

// initial-exec: libcuset_sim.so is loaded with the process, so its TLS is static and every access from
// candidate code is one instruction, which keeps plain (fiber-less) threads cheap.
extern thread_local ThreadContext* tls_thread __attribute__((tls_model("initial-exec")));

// --- kernel entry points, generated for each manifest kernel in the candidate library ---
enum class ParamKind : unsigned char { pointer, integer, floating, other };

struct KernelEntry {
  const char* name;             // as written in the manifest
  void (*invoke)(void** args);  // args[i] points at parameter i's value, as cuLaunchKernel's kernelParams
  int paramCount;
  const unsigned* paramSizes;
  const ParamKind* paramKinds;
};

// --- collectives, called by the prelude's intrinsics ---
enum class WarpOp : int {
  sync,
  shfl_idx,
  shfl_up,
  shfl_down,
  shfl_xor,
  ballot,
  any,
  all,
  match_any,
  match_all,
  reduce_add,
  reduce_min,
  reduce_max,
  reduce_min_signed,
  reduce_max_signed,
  reduce_and,
  reduce_or,
  reduce_xor,
  wmma_load,
  wmma_store,
  wmma_mma,  // the warp-wide WMMA operations (mma.h): every lane must take part
  ptx_shfl,
  ptx_ldmatrix,
  ptx_mma,  // inline PTX (ptx.hpp); `value` points at the lane's operands
};
const char* warpOpName(WarpOp op);

struct WarpResult {
  std::uint64_t value;
  int predicate;
};

// Blocks the calling thread until every lane named in `mask` has reached a warp collective with the
// same op and mask, then returns this lane's result. `value` holds up to 8 bytes of the lane's data.
WarpResult warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int arg, int width, int line);

enum class BlockOp : int { sync, count, all, any };
// __syncthreads and its _count/_and/_or forms. `line` identifies the call site (-1: any site).
int block_barrier(BlockOp op, int predicate, int line);

unsigned active_mask();
void* dynamic_shared();

// Suspends the calling thread until `ready(arg)` holds (cuda::barrier's wait). The scheduler tests it
// whenever every thread of the block is waiting, so nothing spins; if no waiting thread can go on,
// the block is deadlocked, a runtime error naming `what` and `line`.
void wait_until(bool (*ready)(const void*), const void* arg, const char* what, int line);

// --- the shared-memory window (__cvta_generic_to_shared, PTX's .shared state space) ---
// A 32-bit address for a pointer into the running block's shared memory, and back. Addresses are
// consecutive across a whole shared array, so address arithmetic works as on a GPU; shared_pointer
// traps on an address that was never produced (a generic pointer passed where a shared address goes).
std::uint32_t shared_address(const void* pointer);
void* shared_pointer(std::uint64_t address, int line);

// --- asynchronous copies (cp.async): per CUDA thread, landing only when waited for ---
void async_copy(void* dst, const void* src, std::size_t bytes, std::size_t zeroFill, int line);
void async_commit();
void async_wait(std::size_t prior);  // lands every committed group but the `prior` newest
// Any size and alignment: one thread's share of a cooperative_groups::memcpy_async.
void async_copy_bytes(void* dst, const void* src, std::size_t bytes);
// --- copies that land when a cuda::barrier's phase completes (cuda::memcpy_async with a barrier) ---
// Kept per block by the runtime, keyed by the barrier's address: the barrier object itself lives in
// shared memory, which holds the poison pattern when a block starts.
void barrier_attach(const void* barrier, void* dst, const void* src, std::size_t bytes);
void barrier_land(const void* barrier);  // lands its copies and forgets them
void barrier_drop(const void* barrier);  // forgets them (the barrier is initialised again)
[[noreturn]] void trap(const char* what, int line);
// A GPU's "misaligned address": `what` (an atomic) at `address`, which needs `alignment` bytes.
[[noreturn]] void misaligned(const void* address, std::size_t alignment, const char* what);

// --- launching, called by the worker ---
struct LaunchSpec {
  const KernelEntry* kernel = nullptr;
  void** args = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::size_t dynamicSharedBytes = 0;
};

// What the runtime does at each shared-memory access of a build instrumented for it
// (SimBuildChecks::sharedAccesses): nothing; report the first race (two threads, one writing, touching
// the same bytes with no __syncthreads between them, or no __syncwarp for two threads of a warp); or
// run the block's threads in lockstep, every thread making its next shared-memory access before any
// makes the one after it, as a GPU's warps execute (a race lockstep hides stays hidden).
enum class SharedAccesses { unchecked, raceCheck, lockstep };

struct LaunchOptions {
  bool useFibers = true;
  std::size_t stackBytes = 256 * 1024;  // per fiber; a guard page below each stack
  bool reverseThreadOrder = false;      // start threads last-to-first (exposes missing barriers)
  // The byte static and dynamic shared memory hold when each block starts: a GPU leaves another
  // block's or kernel's data there, so a kernel that reads shared memory it never wrote must not
  // find zeros or its own last block's values (-1: leave shared memory as it is).
  int sharedPoison = 0x7F;
  // Counts every block that finishes (read concurrently through std::atomic_ref): the supervisor tells
  // a slow kernel, still finishing blocks, from a hung one by it. Null: not counted.
  std::uint64_t* blocksDone = nullptr;
  SharedAccesses sharedAccesses = SharedAccesses::unchecked;  // lockstep needs useFibers
  // The race check's global-memory part also compares accesses of different blocks (off for a kernel
  // that orders its blocks itself: fences with flags, locks, grid sync).
  bool raceAcrossBlocks = true;
};

// The launching side, not for candidate code: prelude.hpp defines CUSET_SIM_KERNEL_LIBRARY, and every
// candidate's host build would otherwise instantiate <string>'s templates again (~0.1 s of each build).
#ifndef CUSET_SIM_KERNEL_LIBRARY
struct LaunchOutcome {
  bool ok = true;
  std::string error;  // "kernel k: block (3,0,0) thread (17,0,0): divergent __syncthreads ..."
};

// Starts the host threads that run blocks. Call once, before the process restricts its system calls
// (no thread can be created after). `threads` >= 1.
void start_host_threads(int threads);
LaunchOutcome run_launch(const LaunchSpec& spec, const LaunchOptions& options);

// The bytes from a buffer's last byte to the end of its 16-byte granule, which no page fence can
// cover (a page after them would misalign the buffer's start): a candidate library built with its
// loads instrumented (tail_reads.cpp) ends the launch when it reads one of them, as compute-sanitizer
// reports it. Set by the worker before launching; names are copied (and cut to 63 bytes).
struct TailRange {
  const void* begin = nullptr;  // one past the buffer's last byte
  const void* end = nullptr;    // the granule's end
  std::size_t bufferBytes = 0;
  std::string role, name;
};
// Replaces the ranges; more than the runtime keeps (1024) are ignored.
void set_tail_ranges(const std::vector<TailRange>& ranges);

// The global memory a race check (SharedAccesses::raceCheck) watches beside shared memory: the trial's
// buffers, named in its reports (global_accesses.hpp). Replaces what was watched; empty: nothing. More
// than 16 MiB in all is not watched (40 bytes of records per byte).
struct WatchedBuffer {
  const void* begin = nullptr;
  std::size_t bytes = 0;
  std::string role, name;
};
void watch_global_buffers(const std::vector<WatchedBuffer>& buffers);
#endif

}  // namespace cuset_sim
