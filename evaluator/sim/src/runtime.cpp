// The simulator's scheduler: host threads run blocks; within a block, CUDA threads are fibers that
// run until they finish or reach a barrier or warp collective. When every live thread is blocked, the
// scheduler completes whatever collectives can complete (computing every participant's result at
// once, so no lane can overwrite another's value) and resumes those threads. When nothing can
// complete, the block is deadlocked: a runtime error naming the waiting threads, never a hang.
#include "cuset_sim/runtime.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/context/fiber.hpp>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace cuset_sim {

thread_local ThreadContext* tls_thread = nullptr;

namespace {

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

// Fiber stacks, reused: a kernel whose threads never block needs one stack per host thread; a kernel
// with barriers one per CUDA thread of a block. Each stack has a PROT_NONE guard page below it, so a
// stack overflow is a crash, not silent corruption.
class StackPool {
 public:
  explicit StackPool(std::size_t size) : size_(roundToPages(size)) {}
  ~StackPool() {
    for (auto& s : free_) release(s);
  }
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  std::size_t size() const { return size_; }

  bctx::stack_context take() {
    if (!free_.empty()) {
      auto s = free_.back();
      free_.pop_back();
      return s;
    }
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* base = ::mmap(nullptr, size_ + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw SimTrap{"out of memory allocating a fiber stack"};
    ::mprotect(base, page, PROT_NONE);
    bctx::stack_context s;
    s.size = size_;
    s.sp = static_cast<char*>(base) + page + size_;
    return s;
  }
  void give(bctx::stack_context s) { free_.push_back(s); }

 private:
  static std::size_t roundToPages(std::size_t n) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return std::max<std::size_t>(page * 4, (n + page - 1) / page * page);
  }
  void release(bctx::stack_context& s) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    ::munmap(static_cast<char*>(s.sp) - size_ - page, size_ + page);
  }
  std::size_t size_;
  std::vector<bctx::stack_context> free_;
};

struct PoolAllocator {
  StackPool* pool;
  bctx::stack_context allocate() { return pool->take(); }
  void deallocate(bctx::stack_context& s) noexcept { pool->give(s); }
};

class BlockRunner;

struct Lane {
  enum class State { ready, warp, block, done };
  ThreadContext ctx{};
  BlockRunner* runner = nullptr;
  bctx::fiber fiber;      // this thread, while suspended
  bctx::fiber scheduler;  // where this thread yields to
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
  // its result
  WarpResult warpResult{0, 0};
  int blockResult = 0;
};

std::string threadName(const ThreadContext& c) {
  return format("block (%u,%u,%u) thread (%u,%u,%u)", c.block->blockIdx.x, c.block->blockIdx.y, c.block->blockIdx.z, c.threadIdx.x,
                c.threadIdx.y, c.threadIdx.z);
}

class BlockRunner {
 public:
  // Runs one block; returns false with `error` set on a kernel-side error.
  bool run(const LaunchSpec& spec, const LaunchOptions& options, uint3 blockIdx);
  const std::string& error() const { return error_; }
  bool fiberMode() const { return fiberMode_; }

  void fail(const Lane& lane, const std::string& message) {
    if (error_.empty()) error_ = threadName(lane.ctx) + ": " + message;
  }

 private:
  bool runPlain(const LaunchSpec& spec);
  bool runFibers(const LaunchSpec& spec, const LaunchOptions& options);
  void resume(Lane& lane) {
    tls_thread = &lane.ctx;
    lane.fiber = std::move(lane.fiber).resume();
    tls_thread = nullptr;
  }
  // Completes what can complete; returns the lanes to resume (empty: deadlock or error).
  std::vector<Lane*> resolve();
  bool resolveWarpGroup(std::size_t first, std::size_t last, Lane& leader, std::vector<Lane*>& wake);
  std::string describeDeadlock() const;

  std::vector<Lane> lanes_;
  std::unique_ptr<StackPool> stacks_;
  std::vector<std::max_align_t> shared_;  // dynamic shared memory
  BlockInfo info_{};
  std::string error_;
  bool fiberMode_ = false;
};

bool BlockRunner::run(const LaunchSpec& spec, const LaunchOptions& options, uint3 blockIdx) {
  error_.clear();
  fiberMode_ = options.useFibers;
  info_.blockIdx = blockIdx;
  info_.blockDim = dim3(spec.block[0], spec.block[1], spec.block[2]);
  info_.gridDim = dim3(spec.grid[0], spec.grid[1], spec.grid[2]);
  const std::size_t sharedWords = (spec.dynamicSharedBytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (shared_.size() < sharedWords) shared_.resize(sharedWords);
  info_.dynamicShared = shared_.data();
  const std::size_t n = std::size_t{spec.block[0]} * spec.block[1] * spec.block[2];
  if (lanes_.size() < n) lanes_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Lane& l = lanes_[i];
    l.ctx.threadIdx = uint3{static_cast<unsigned>(i % spec.block[0]), static_cast<unsigned>((i / spec.block[0]) % spec.block[1]),
                            static_cast<unsigned>(i / (std::size_t{spec.block[0]} * spec.block[1]))};
    l.ctx.block = &info_;
    l.ctx.linear = static_cast<unsigned>(i);
    l.ctx.lane = static_cast<unsigned>(i % 32);
    l.ctx.impl = &l;
    l.runner = this;
    l.state = Lane::State::ready;
  }
  return fiberMode_ ? runFibers(spec, options) : runPlain(spec);
}

bool BlockRunner::runPlain(const LaunchSpec& spec) {
  const std::size_t n = std::size_t{spec.block[0]} * spec.block[1] * spec.block[2];
  for (std::size_t i = 0; i < n; ++i) {
    tls_thread = &lanes_[i].ctx;
    try {
      spec.kernel->invoke(spec.args);
    } catch (const SimTrap& t) {
      fail(lanes_[i], t.message);
    } catch (const std::exception& e) {
      fail(lanes_[i], std::string("uncaught exception: ") + e.what());
    }
    tls_thread = nullptr;
    if (!error_.empty()) return false;
  }
  return true;
}

bool BlockRunner::runFibers(const LaunchSpec& spec, const LaunchOptions& options) {
  if (!stacks_ || stacks_->size() < options.stackBytes) stacks_ = std::make_unique<StackPool>(options.stackBytes);
  const std::size_t n = std::size_t{spec.block[0]} * spec.block[1] * spec.block[2];
  auto body = [&spec](Lane& lane) {
    return [&spec, &lane](bctx::fiber&& scheduler) {
      lane.scheduler = std::move(scheduler);
      try {
        spec.kernel->invoke(spec.args);
      } catch (const bctx::detail::forced_unwind&) {
        throw;  // the fiber is being destroyed; let Boost unwind it
      } catch (const SimTrap& t) {
        lane.runner->fail(lane, t.message);
      } catch (const std::exception& e) {
        lane.runner->fail(lane, std::string("uncaught exception: ") + e.what());
      }
      lane.state = Lane::State::done;
      return std::move(lane.scheduler);
    };
  };
  auto abandon = [&] {
    for (std::size_t i = 0; i < n; ++i) lanes_[i].fiber = bctx::fiber();  // unwinds suspended threads
    return false;
  };
  for (std::size_t k = 0; k < n; ++k) {
    Lane& lane = lanes_[options.reverseThreadOrder ? n - 1 - k : k];
    try {
      lane.fiber = bctx::fiber(std::allocator_arg, PoolAllocator{stacks_.get()}, body(lane));
    } catch (const SimTrap& t) {
      fail(lane, t.message);
      return abandon();
    }
    resume(lane);
    if (!error_.empty()) return abandon();
  }
  for (;;) {
    bool allDone = true;
    for (std::size_t i = 0; i < n; ++i) allDone = allDone && lanes_[i].state == Lane::State::done;
    if (allDone) return true;
    std::vector<Lane*> wake = resolve();
    if (!error_.empty()) return abandon();
    if (wake.empty()) {
      error_ = describeDeadlock();
      return abandon();
    }
    if (options.reverseThreadOrder) std::reverse(wake.begin(), wake.end());
    for (Lane* lane : wake) {
      resume(*lane);
      if (!error_.empty()) return abandon();
    }
  }
}

std::vector<Lane*> BlockRunner::resolve() {
  const std::size_t n = std::size_t{info_.blockDim.x} * info_.blockDim.y * info_.blockDim.z;
  std::vector<Lane*> wake;
  for (std::size_t first = 0; first < n; first += 32) {
    const std::size_t last = std::min(first + 32, n);
    for (std::size_t i = first; i < last; ++i) {
      Lane& l = lanes_[i];
      if (l.state == Lane::State::warp && !resolveWarpGroup(first, last, l, wake) && !error_.empty()) return {};
    }
  }
  if (!wake.empty()) return wake;
  // Block barrier: every live thread must wait at the same __syncthreads.
  const Lane* reference = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const Lane& l = lanes_[i];
    if (l.state == Lane::State::done) continue;
    if (l.state != Lane::State::block) return {};  // some thread waits in a warp collective: deadlock
    if (!reference) {
      reference = &l;
    } else if ((l.line >= 0 && reference->line >= 0 && l.line != reference->line) || l.blockOp != reference->blockOp) {
      fail(l, format("divergent __syncthreads: this thread waits at line %d while thread (%u,%u,%u) waits at line %d", l.line,
                     reference->ctx.threadIdx.x, reference->ctx.threadIdx.y, reference->ctx.threadIdx.z, reference->line));
      return {};
    }
  }
  if (!reference) return {};
  int count = 0, live = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (lanes_[i].state != Lane::State::block) continue;
    ++live;
    count += lanes_[i].predicate != 0;
  }
  for (std::size_t i = 0; i < n; ++i) {
    Lane& l = lanes_[i];
    if (l.state != Lane::State::block) continue;
    switch (l.blockOp) {
      case BlockOp::sync: l.blockResult = 0; break;
      case BlockOp::count: l.blockResult = count; break;
      case BlockOp::all: l.blockResult = count == live; break;
      case BlockOp::any: l.blockResult = count > 0; break;
    }
    l.state = Lane::State::ready;
    wake.push_back(&l);
  }
  return wake;
}

bool BlockRunner::resolveWarpGroup(std::size_t first, std::size_t last, Lane& leader, std::vector<Lane*>& wake) {
  const unsigned myBit = 1u << leader.ctx.lane;
  if ((leader.mask & myBit) == 0) {
    fail(leader, format("%s with mask 0x%08x, which does not include the calling lane %u", warpOpName(leader.op), leader.mask, leader.ctx.lane));
    return false;
  }
  // Lanes that do not exist (a partial last warp) or have exited are left out of the group.
  unsigned group = 0;
  for (std::size_t i = first; i < last; ++i) {
    const Lane& l = lanes_[i];
    if ((leader.mask & (1u << l.ctx.lane)) == 0 || l.state == Lane::State::done) continue;
    if (l.state == Lane::State::block) return false;  // cannot complete now
    if (l.state == Lane::State::warp && (l.op != leader.op || l.mask != leader.mask)) {
      fail(l, format("divergent warp collective: this lane waits in %s (mask 0x%08x, line %d) while lane %u waits in %s (mask 0x%08x, line %d)",
                     warpOpName(l.op), l.mask, l.line, leader.ctx.lane, warpOpName(leader.op), leader.mask, leader.line));
      return false;
    }
    group |= 1u << l.ctx.lane;
  }
  std::uint64_t values[32] = {};
  for (std::size_t i = first; i < last; ++i) {
    if (group & (1u << lanes_[i].ctx.lane)) values[lanes_[i].ctx.lane] = lanes_[i].value;
  }
  auto in = [&](int lane) { return lane >= 0 && lane < 32 && (group & (1u << lane)); };
  unsigned ballot = 0, matchAll = 1;
  std::uint64_t first_value = 0;
  bool haveFirst = false;
  for (int lane = 0; lane < 32; ++lane) {
    if (!in(lane)) continue;
    if (values[lane] != 0) ballot |= 1u << lane;
    if (!haveFirst) {
      first_value = values[lane];
      haveFirst = true;
    } else if (values[lane] != first_value) {
      matchAll = 0;
    }
  }
  std::uint64_t reduced = 0;
  {
    bool init = false;
    for (int lane = 0; lane < 32; ++lane) {
      if (!in(lane)) continue;
      const auto u = static_cast<std::uint32_t>(values[lane]);
      const auto s = static_cast<std::int32_t>(u);
      if (!init) {
        reduced = u;
        init = true;
        continue;
      }
      const auto r = static_cast<std::uint32_t>(reduced);
      switch (leader.op) {
        case WarpOp::reduce_add: reduced = static_cast<std::uint32_t>(r + u); break;
        case WarpOp::reduce_min: reduced = std::min(r, u); break;
        case WarpOp::reduce_max: reduced = std::max(r, u); break;
        case WarpOp::reduce_min_signed: reduced = static_cast<std::uint32_t>(std::min(static_cast<std::int32_t>(r), s)); break;
        case WarpOp::reduce_max_signed: reduced = static_cast<std::uint32_t>(std::max(static_cast<std::int32_t>(r), s)); break;
        case WarpOp::reduce_and: reduced = r & u; break;
        case WarpOp::reduce_or: reduced = r | u; break;
        case WarpOp::reduce_xor: reduced = r ^ u; break;
        default: break;
      }
    }
  }
  for (std::size_t i = first; i < last; ++i) {
    Lane& l = lanes_[i];
    const int lane = static_cast<int>(l.ctx.lane);
    if (!in(lane)) continue;
    const int width = (l.width >= 1 && l.width <= 32) ? l.width : 32;
    const int base = lane - lane % width;
    std::uint64_t v = values[lane];
    int predicate = 0;
    auto from = [&](int src) { return in(src) ? values[src] : values[lane]; };
    switch (l.op) {
      case WarpOp::sync: break;
      case WarpOp::shfl_idx: v = from(base + ((l.arg % width) + width) % width); break;
      case WarpOp::shfl_up: v = lane - l.arg >= base ? from(lane - l.arg) : values[lane]; break;
      case WarpOp::shfl_down: v = lane + l.arg < base + width ? from(lane + l.arg) : values[lane]; break;
      case WarpOp::shfl_xor: v = ((lane ^ l.arg) >= base && (lane ^ l.arg) < base + width) ? from(lane ^ l.arg) : values[lane]; break;
      case WarpOp::ballot: v = ballot; break;
      case WarpOp::any: predicate = ballot != 0; v = predicate; break;
      case WarpOp::all: predicate = ballot == group; v = predicate; break;
      case WarpOp::match_any: {
        unsigned m = 0;
        for (int j = 0; j < 32; ++j) {
          if (in(j) && values[j] == values[lane]) m |= 1u << j;
        }
        v = m;
        break;
      }
      case WarpOp::match_all: predicate = static_cast<int>(matchAll); v = matchAll ? group : 0; break;
      default: v = reduced; break;
    }
    l.warpResult = WarpResult{v, predicate};
    l.state = Lane::State::ready;
    wake.push_back(&l);
  }
  return true;
}

std::string BlockRunner::describeDeadlock() const {
  const std::size_t n = std::size_t{info_.blockDim.x} * info_.blockDim.y * info_.blockDim.z;
  std::map<std::string, int> waits;
  for (std::size_t i = 0; i < n; ++i) {
    const Lane& l = lanes_[i];
    if (l.state == Lane::State::block) ++waits[format("__syncthreads (line %d)", l.line)];
    if (l.state == Lane::State::warp) ++waits[format("%s mask 0x%08x (line %d)", warpOpName(l.op), l.mask, l.line)];
  }
  std::string parts;
  for (const auto& [what, count] : waits) parts += format("%s%d thread(s) in %s", parts.empty() ? "" : ", ", count, what.c_str());
  return format("block (%u,%u,%u): deadlock: a barrier that not all live threads can reach (%s)", info_.blockIdx.x, info_.blockIdx.y,
                info_.blockIdx.z, parts.c_str());
}

Lane& currentLane(const char* what) {
  ThreadContext* t = tls_thread;
  if (t == nullptr || t->impl == nullptr) throw SimTrap{std::string(what) + " called outside a kernel"};
  Lane& lane = *static_cast<Lane*>(t->impl);
  if (!lane.runner->fiberMode()) {
    throw SimTrap{std::string(what) + " reached in a kernel the simulator ran without fibers (its source showed no barrier); "
                                      "this is a simulator limitation, please report it"};
  }
  return lane;
}

void yield(Lane& lane) {
  lane.scheduler = std::move(lane.scheduler).resume();
  tls_thread = &lane.ctx;
}

// Host threads that run blocks of the current launch.
class HostThreads {
 public:
  // Returns once every thread is running: glibc's thread start-up makes system calls (rseq,
  // set_robust_list) that the sandbox's seccomp filter, installed right after, would forbid.
  explicit HostThreads(int count) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { loop(); });
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return started_ == threads_.size(); });
  }
  ~HostThreads() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  LaunchOutcome run(const LaunchSpec& spec, const LaunchOptions& options) {
    std::unique_lock lock(mutex_);
    spec_ = &spec;
    options_ = &options;
    nextBlock_ = 0;
    failed_ = false;
    firstError_.clear();
    busy_ = threads_.size();
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [this] { return busy_ == 0; });
    return LaunchOutcome{!failed_, firstError_};
  }

  static bool runBlocks(const LaunchSpec& spec, const LaunchOptions& options, std::atomic<std::uint64_t>& next, std::atomic<bool>& failed,
                        BlockRunner& runner, std::string& error) {
    const std::uint64_t total = std::uint64_t{spec.grid[0]} * spec.grid[1] * spec.grid[2];
    for (std::uint64_t b = next++; b < total && !failed; b = next++) {
      const uint3 idx{static_cast<unsigned>(b % spec.grid[0]), static_cast<unsigned>((b / spec.grid[0]) % spec.grid[1]),
                      static_cast<unsigned>(b / (std::uint64_t{spec.grid[0]} * spec.grid[1]))};
      if (!runner.run(spec, options, idx)) {
        error = runner.error();
        failed = true;
        return false;
      }
    }
    return true;
  }

 private:
  void loop() {
    BlockRunner runner;
    std::uint64_t seen = 0;
    {
      std::lock_guard lock(mutex_);
      ++started_;
    }
    done_.notify_all();
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      std::string error;
      if (!runBlocks(*spec_, *options_, nextBlock_, failed_, runner, error)) {
        std::lock_guard lock(mutex_);
        if (firstError_.empty()) firstError_ = error;
      }
      std::lock_guard lock(mutex_);
      if (--busy_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool stopping_ = false;
  std::uint64_t generation_ = 0;
  std::size_t busy_ = 0;
  std::size_t started_ = 0;
  const LaunchSpec* spec_ = nullptr;
  const LaunchOptions* options_ = nullptr;
  std::atomic<std::uint64_t> nextBlock_{0};
  std::atomic<bool> failed_{false};
  std::string firstError_;
};

std::unique_ptr<HostThreads>& hostThreads() {
  static std::unique_ptr<HostThreads> pool;
  return pool;
}

}  // namespace

const char* warpOpName(WarpOp op) {
  switch (op) {
    case WarpOp::sync: return "__syncwarp";
    case WarpOp::shfl_idx: return "__shfl_sync";
    case WarpOp::shfl_up: return "__shfl_up_sync";
    case WarpOp::shfl_down: return "__shfl_down_sync";
    case WarpOp::shfl_xor: return "__shfl_xor_sync";
    case WarpOp::ballot: return "__ballot_sync";
    case WarpOp::any: return "__any_sync";
    case WarpOp::all: return "__all_sync";
    case WarpOp::match_any: return "__match_any_sync";
    case WarpOp::match_all: return "__match_all_sync";
    case WarpOp::reduce_add: return "__reduce_add_sync";
    case WarpOp::reduce_min: case WarpOp::reduce_min_signed: return "__reduce_min_sync";
    case WarpOp::reduce_max: case WarpOp::reduce_max_signed: return "__reduce_max_sync";
    case WarpOp::reduce_and: return "__reduce_and_sync";
    case WarpOp::reduce_or: return "__reduce_or_sync";
    case WarpOp::reduce_xor: return "__reduce_xor_sync";
  }
  return "?";
}

WarpResult warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int arg, int width, int line) {
  Lane& lane = currentLane(warpOpName(op));
  lane.state = Lane::State::warp;
  lane.op = op;
  lane.mask = mask;
  lane.value = value;
  lane.arg = arg;
  lane.width = width;
  lane.line = line;
  yield(lane);
  return lane.warpResult;
}

int block_barrier(BlockOp op, int predicate, int line) {
  Lane& lane = currentLane("__syncthreads");
  lane.state = Lane::State::block;
  lane.blockOp = op;
  lane.predicate = predicate;
  lane.line = line;
  yield(lane);
  return lane.blockResult;
}

unsigned active_mask() {
  Lane& lane = currentLane("__activemask");
  // Threads of a warp that have not exited; the simulator does not model divergence within a warp.
  const ThreadContext& c = lane.ctx;
  const std::size_t n = std::size_t{c.block->blockDim.x} * c.block->blockDim.y * c.block->blockDim.z;
  const std::size_t first = c.linear - c.lane;
  unsigned mask = 0;
  Lane* base = &lane - c.lane;
  for (std::size_t i = first; i < std::min(first + 32, n); ++i) {
    if (base[i - first].state != Lane::State::done) mask |= 1u << (i - first);
  }
  return mask;
}

void* dynamic_shared() { return tls_thread ? tls_thread->block->dynamicShared : nullptr; }

void trap(const char* what, int line) {
  throw SimTrap{line >= 0 ? format("%s (line %d)", what, line) : std::string(what)};
}

void start_host_threads(int threads) {
  hostThreads() = std::make_unique<HostThreads>(std::max(1, threads));
}

LaunchOutcome run_launch(const LaunchSpec& spec, const LaunchOptions& options) {
  LaunchOutcome outcome;
  if (hostThreads()) {
    outcome = hostThreads()->run(spec, options);
  } else {
    thread_local BlockRunner runner;
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::string error;
    HostThreads::runBlocks(spec, options, next, failed, runner, error);
    outcome = LaunchOutcome{!failed, error};
  }
  if (!outcome.ok) outcome.error = std::string("kernel ") + spec.kernel->name + ": " + outcome.error;
  return outcome;
}

}  // namespace cuset_sim
