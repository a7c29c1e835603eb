#pragma once
// The simulator's block scheduler, shared by the runtime's translation units: a CUDA thread is a Lane
// (a fiber and the collective it waits in); a BlockRunner runs one block's lanes until each finishes,
// resolving barriers and warp collectives when every live lane is blocked. Private to libcuset_sim;
// hidden from the candidate libraries that link it.
#include <boost/context/fiber.hpp>
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuset_sim/runtime.hpp"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>  // before the hidden region: these are the sanitizer runtime's
#endif

#pragma GCC visibility push(hidden)
namespace cuset_sim::detail {

namespace bctx = boost::context;

// Thrown by trap() and caught by the scheduler: a kernel-side error (assertion, __trap, misuse of a
// collective) that ends the launch with a runtime error.
struct SimTrap {
  std::string message;
};

std::string format(const char* fmt, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

// Ends the launch when [address, address+size) touches a buffer's tail (tail_reads.cpp): for loads the
// runtime performs itself (inline PTX's ld), which no compiler instrumentation sees.
void check_tail_read(const void* address, std::size_t size);

class BlockRunner;
class StackPool;

// AddressSanitizer must be told of every switch between stacks (Boost.Context's fcontext fibers do not
// tell it): without, a CUDA thread's exception or its stack's shadow reads as memory corruption. A
// no-op in other builds.
#if defined(__SANITIZE_ADDRESS__)
struct StackSwitch {
  const void* bottom = nullptr;  // the stack switched to
  std::size_t size = 0;
  void* fakeStack = nullptr;
  void start(const void* toBottom, std::size_t toSize) { __sanitizer_start_switch_fiber(&fakeStack, toBottom, toSize); }
  void startLast(const void* toBottom, std::size_t toSize) { __sanitizer_start_switch_fiber(nullptr, toBottom, toSize); }
  void finish(const void** fromBottom = nullptr, std::size_t* fromSize = nullptr) {
    __sanitizer_finish_switch_fiber(fakeStack, fromBottom, fromSize);
  }
};
#else
struct StackSwitch {
  void start(const void*, std::size_t) {}
  void startLast(const void*, std::size_t) {}
  void finish(const void** = nullptr, std::size_t* = nullptr) {}
};
#endif

struct Lane {
  enum class State { ready, warp, block, until, stepped, done };  // stepped: at a shared-memory access, in lockstep
  ThreadContext ctx{};
  BlockRunner* runner = nullptr;
  bctx::fiber fiber;      // this thread, while suspended
  bctx::fiber scheduler;  // where this thread yields to
  // Both stacks' bounds, for AddressSanitizer's switch annotations (StackSwitch).
  const void* stackBottom = nullptr;
  std::size_t stackSize = 0;
  const void* schedulerBottom = nullptr;
  std::size_t schedulerSize = 0;
  StackSwitch toFiber, toScheduler;
  State state = State::ready;
  // the collective it waits in
  WarpOp op = WarpOp::sync;
  unsigned mask = 0;
  std::uint64_t value = 0;
  int arg = 0;
  int width = 32;
  int line = -1;
  BlockOp blockOp = BlockOp::sync;
  int predicate = 0;
  // the condition it waits for (State::until)
  bool (*ready)(const void*) = nullptr;
  const void* readyArg = nullptr;
  const char* waitingFor = "";
  // its result
  WarpResult warpResult{0, 0};
  int blockResult = 0;
  // Its last loads in a race-checked launch, with the bytes each read: the host compiler's address
  // instrumentation drops a store to bytes the same code just loaded (`out[j] += v` calls the hook for
  // the load only), so a loaded location that has changed when the thread next reaches the runtime was
  // stored by it (nothing else runs in between), and is checked as its write (shared_accesses.cpp).
  struct Load {
    std::uintptr_t address = 0;
    std::size_t size = 0;
    const void* pc = nullptr;
    unsigned char bytes[16] = {};
  };
  std::array<Load, 8> loads{};
  std::size_t loadCount = 0, nextLoad = 0;
};

// "block (x,y,z) thread (x,y,z)", for error messages.
std::string threadName(const ThreadContext& c);
// "block (x,y,z)" and "block (x,y,z) thread (x,y,z)", from coordinates (the race checks' other thread).
std::string blockName(uint3 block);
std::string threadName(uint3 block, uint3 thread);
// A code address as the race checks report it: `@pc:0xOFFSET@`, OFFSET the return address's offset in
// the candidate's library, which the evaluator (outside the sandbox) turns into a source line; 0: unknown.
std::string codeOffset(std::size_t returnAddressOffset);

// Where a candidate library's `__shared__` variables are: its thread-local block (the prelude makes
// them thread_local), by TLS module id, found once per launch from the kernel's code address.
struct StaticShared {
  std::size_t module = 0;  // 0: the library has no thread-local block
  std::size_t bytes = 0;
  static StaticShared of(const KernelEntry& kernel);
};

class BlockRunner {
 public:
  BlockRunner();
  ~BlockRunner();
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  // Runs one block; returns false with `error` set on a kernel-side error.
  bool run(const LaunchSpec& spec, const LaunchOptions& options, const StaticShared& statics, uint3 blockIdx);
  const std::string& error() const { return error_; }
  bool fiberMode() const { return fiberMode_; }

  void fail(const Lane& lane, const std::string& message) {
    if (error_.empty()) error_ = threadName(lane.ctx) + ": " + message;
  }

  // A shared-memory access of `lane` (shared_accesses.cpp): checked for a race, or a lockstep step.
  void sharedAccess(Lane& lane, std::uintptr_t address, std::size_t size, bool write, const void* pc);
  // The stores the instrumentation dropped, found from the lane's last loads (Lane::loads): before it
  // yields and when it finishes, since other threads run then.
  void settleLoads(Lane& lane, bool forget);
  // A warp collective or a block barrier completed: accesses before it and after it cannot race.
  void warpSynchronized(std::size_t warp) {
    if (warp < warpEpochs_.size()) ++warpEpochs_[warp];
  }

 private:
  bool runPlain(const LaunchSpec& spec);
  void poisonShared(const LaunchOptions& options, const StaticShared& statics);
  bool runFibers(const LaunchSpec& spec, const LaunchOptions& options);
  void resume(Lane& lane) {
    tls_thread = &lane.ctx;
    lane.toFiber.start(lane.stackBottom, lane.stackSize);
    lane.fiber = std::move(lane.fiber).resume();
    lane.toFiber.finish();
    tls_thread = nullptr;
  }
  // Completes what can complete; returns the lanes to resume (empty: deadlock or error).
  std::vector<Lane*> resolve();
  bool resolveWarpGroup(std::size_t first, std::size_t last, Lane& leader, std::vector<Lane*>& wake);
  std::string describeDeadlock() const;

  // Per byte of the block's shared memory, the last write and the reads since (race checks).
  struct AccessRecord {
    std::uint64_t block = 0;  // info_.serial of the block that made it; another block's is stale
    std::uint32_t writer = 0, writeEpoch = 0, writeWarpEpoch = 0;
    std::uint32_t reader = 0, readEpoch = 0, readWarpEpoch = 0;  // reader: linear index + 1, or kManyReaders
    const void* writePc = nullptr;                               // where in the kernel's code each was made
    const void* readPc = nullptr;
  };
  static constexpr std::uint32_t kManyReaders = 0xFFFFFFFFu;
  void startSharedAccesses(const LaunchOptions& options, const StaticShared& statics);
  // Checks one access for a race; false when it is in neither shared memory nor watched global memory.
  bool checkAccess(Lane& lane, std::uintptr_t address, std::size_t size, bool write, const void* pc);
  // The byte's offset in the block's shared memory (static bytes first), nullopt outside it.
  std::optional<std::size_t> sharedOffset(std::uintptr_t address) const;
  std::string describeSharedByte(std::size_t offset) const;
  SharedAccesses sharedAccesses_ = SharedAccesses::unchecked;
  std::uintptr_t staticShared_ = 0;
  std::size_t staticSharedBytes_ = 0;
  std::vector<AccessRecord> accesses_;     // static shared bytes first, then dynamic ones
  std::uint32_t epoch_ = 0;                // __syncthreads completed in this block
  int lastBarrierLine_ = -1;               // the line of the last one
  std::vector<std::uint32_t> warpEpochs_;  // warp collectives (and barriers) completed, per warp

  std::vector<Lane> lanes_;
  std::unique_ptr<StackPool> stacks_;
  std::vector<std::max_align_t> shared_;  // dynamic shared memory
  BlockInfo info_{};
  std::string error_;
  bool fiberMode_ = false;
};

// The lane of the running CUDA thread; throws SimTrap outside a kernel or when the block runs
// without fibers (a collective there cannot wait for the other threads).
inline Lane& currentLane(const char* what) {
  ThreadContext* t = tls_thread;
  if (t == nullptr || t->impl == nullptr) throw SimTrap{std::string(what) + " called outside a kernel"};
  Lane& lane = *static_cast<Lane*>(t->impl);
  if (!lane.runner->fiberMode()) {
    throw SimTrap{std::string(what) +
                  " reached in a kernel the simulator ran without fibers (its source showed no barrier); "
                  "this is a simulator limitation, please report it"};
  }
  return lane;
}

// Suspends the lane until the scheduler resumes it.
inline void yield(Lane& lane) {
  if (lane.loadCount > 0) lane.runner->settleLoads(lane, true);
  lane.toScheduler.start(lane.schedulerBottom, lane.schedulerSize);
  lane.scheduler = std::move(lane.scheduler).resume();
  lane.toScheduler.finish();
  tls_thread = &lane.ctx;
}

}  // namespace cuset_sim::detail
#pragma GCC visibility pop
