// Running one block: plainly (one CUDA thread after another, for kernels without barriers) or with
// a fiber per CUDA thread that runs until it finishes or reaches a barrier or warp collective. When
// every live thread is blocked, the scheduler completes whatever collectives can complete and
// resumes those threads; when nothing can complete, the block is deadlocked: a runtime error naming
// the waiting threads, never a hang.
#include "block_runner.hpp"

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>

// glibc's: the address of a TLS module's block for the calling thread (allocating it on first use).
extern "C" void* __tls_get_addr(void* index);

#pragma GCC visibility push(hidden)
namespace cuset_sim::detail {

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
  Lane* lane;  // told its stack's bounds
  bctx::stack_context allocate() {
    bctx::stack_context s = pool->take();
    lane->stackBottom = static_cast<char*>(s.sp) - s.size;
    lane->stackSize = s.size;
    return s;
  }
  void deallocate(bctx::stack_context& s) noexcept { pool->give(s); }
};

std::string blockName(uint3 b) { return format("block (%u,%u,%u)", b.x, b.y, b.z); }

std::string threadName(uint3 block, uint3 thread) { return blockName(block) + format(" thread (%u,%u,%u)", thread.x, thread.y, thread.z); }

std::string threadName(const ThreadContext& c) { return threadName(c.block->blockIdx, c.threadIdx); }

StaticShared StaticShared::of(const KernelEntry& kernel) {
  struct Search {
    std::uintptr_t code;
    StaticShared found;
  } search{reinterpret_cast<std::uintptr_t>(kernel.invoke), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* arg) {
        auto& s = *static_cast<Search*>(arg);
        bool contains = false;
        std::size_t tls = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& h = info->dlpi_phdr[i];
          const std::uintptr_t begin = info->dlpi_addr + h.p_vaddr;
          if (h.p_type == PT_LOAD && s.code >= begin && s.code < begin + h.p_memsz) contains = true;
          if (h.p_type == PT_TLS) tls = h.p_memsz;
        }
        if (!contains) return 0;
        s.found = StaticShared{info->dlpi_tls_modid, tls};
        return 1;
      },
      &search);
  return search.found;
}

void BlockRunner::poisonShared(const LaunchOptions& options, const StaticShared& statics) {
  if (options.sharedPoison < 0) return;
  const int byte = options.sharedPoison & 0xFF;
  if (info_.dynamicSharedBytes > 0) std::memset(info_.dynamicShared, byte, info_.dynamicSharedBytes);
  if (statics.module != 0 && statics.bytes > 0) {
    struct {
      unsigned long module, offset;
    } index{statics.module, 0};
    std::memset(__tls_get_addr(&index), byte, statics.bytes);
  }
}

BlockRunner::BlockRunner() = default;
BlockRunner::~BlockRunner() = default;

bool BlockRunner::run(const LaunchSpec& spec, const LaunchOptions& options, const StaticShared& statics, uint3 blockIdx) {
  error_.clear();
  fiberMode_ = options.useFibers;
  static std::atomic<std::uint64_t> blocksStarted{0};
  info_.serial = ++blocksStarted;
  info_.blockIdx = blockIdx;
  info_.blockDim = dim3(spec.block[0], spec.block[1], spec.block[2]);
  info_.gridDim = dim3(spec.grid[0], spec.grid[1], spec.grid[2]);
  const std::size_t sharedWords = (spec.dynamicSharedBytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (shared_.size() < sharedWords) shared_.resize(sharedWords);
  info_.dynamicShared = shared_.data();
  info_.dynamicSharedBytes = spec.dynamicSharedBytes;
  poisonShared(options, statics);
  startSharedAccesses(options, statics);
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
    l.loadCount = l.nextLoad = 0;
    l.toScheduler = StackSwitch{};  // this lane's fiber is new: no fake stack of its own yet
  }
  return fiberMode_ ? runFibers(spec, options) : runPlain(spec);
}

bool BlockRunner::runPlain(const LaunchSpec& spec) {
  const std::size_t n = std::size_t{spec.block[0]} * spec.block[1] * spec.block[2];
  for (std::size_t i = 0; i < n; ++i) {
    tls_thread = &lanes_[i].ctx;
    try {
      spec.kernel->invoke(spec.args);
      if (lanes_[i].loadCount > 0) settleLoads(lanes_[i], true);
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
      lane.toScheduler.finish(&lane.schedulerBottom, &lane.schedulerSize);  // a fresh stack: the scheduler's is the one left
      lane.scheduler = std::move(scheduler);
      try {
        spec.kernel->invoke(spec.args);
        if (lane.loadCount > 0) lane.runner->settleLoads(lane, true);
      } catch (const bctx::detail::forced_unwind&) {
        throw;  // the fiber is being destroyed; let Boost unwind it
      } catch (const SimTrap& t) {
        lane.runner->fail(lane, t.message);
      } catch (const std::exception& e) {
        lane.runner->fail(lane, std::string("uncaught exception: ") + e.what());
      }
      lane.state = Lane::State::done;
      lane.toScheduler.startLast(lane.schedulerBottom, lane.schedulerSize);  // this stack ends here
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
      lane.fiber = bctx::fiber(std::allocator_arg, PoolAllocator{stacks_.get(), &lane}, body(lane));
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
    // Lockstep: every thread at a shared-memory access makes it, in thread order, before any makes its
    // next one; barriers and collectives resolve once no thread has an access left to make.
    bool stepped = false;
    for (std::size_t k = 0; k < n; ++k) {
      Lane& lane = lanes_[options.reverseThreadOrder ? n - 1 - k : k];
      if (lane.state != Lane::State::stepped) continue;
      stepped = true;
      lane.state = Lane::State::ready;
      resume(lane);
      if (!error_.empty()) return abandon();
    }
    if (stepped) continue;
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
  for (std::size_t i = 0; i < n; ++i) {
    Lane& l = lanes_[i];
    if (l.state == Lane::State::until && l.ready(l.readyArg)) {
      l.state = Lane::State::ready;
      wake.push_back(&l);
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
  ++epoch_;
  lastBarrierLine_ = reference->line;
  for (std::size_t w = 0; w < warpEpochs_.size(); ++w) warpSynchronized(w);
  for (std::size_t i = 0; i < n; ++i) {
    Lane& l = lanes_[i];
    if (l.state != Lane::State::block) continue;
    switch (l.blockOp) {
      case BlockOp::sync:
        l.blockResult = 0;
        break;
      case BlockOp::count:
        l.blockResult = count;
        break;
      case BlockOp::all:
        l.blockResult = count == live;
        break;
      case BlockOp::any:
        l.blockResult = count > 0;
        break;
    }
    l.state = Lane::State::ready;
    wake.push_back(&l);
  }
  return wake;
}

std::string BlockRunner::describeDeadlock() const {
  const std::size_t n = std::size_t{info_.blockDim.x} * info_.blockDim.y * info_.blockDim.z;
  std::map<std::string, int> waits;
  for (std::size_t i = 0; i < n; ++i) {
    const Lane& l = lanes_[i];
    if (l.state == Lane::State::block) ++waits[format("__syncthreads (line %d)", l.line)];
    if (l.state == Lane::State::warp) ++waits[format("%s mask 0x%08x (line %d)", warpOpName(l.op), l.mask, l.line)];
    if (l.state == Lane::State::until) ++waits[format("%s (line %d)", l.waitingFor, l.line)];
  }
  std::string parts;
  for (const auto& [what, count] : waits) parts += format("%s%d thread(s) in %s", parts.empty() ? "" : ", ", count, what.c_str());
  return format("block (%u,%u,%u): deadlock: a barrier that not all live threads can reach (%s)", info_.blockIdx.x, info_.blockIdx.y,
                info_.blockIdx.z, parts.c_str());
}

}  // namespace cuset_sim::detail
#pragma GCC visibility pop
