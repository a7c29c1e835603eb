// The parts of CUDA's memory model that are more than a host pointer: 32-bit shared-memory addresses
// (the .shared state space of PTX and __cvta_generic_to_shared) and asynchronous copies (cp.async),
// shared by the pipeline headers and the inline-PTX interpreter so that both see one state.
#include <link.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "block_runner.hpp"
#include "cuset_sim/runtime.hpp"

namespace cuset_sim {

namespace {

using detail::format;
using detail::SimTrap;

// A block's shared memory is host memory (thread_local variables and the runner's dynamic buffer) at
// 64-bit addresses that need not lie within 4 GiB of each other. The window maps 64 KiB pages of it
// to 32-bit addresses: the first pointer seen on a page maps that page and the pages around it (more
// than any block's shared memory spans) to consecutive addresses, so that `base + offset` arithmetic
// on a 32-bit address stays within the array it started in. Address 0 is never produced.
class SharedWindow {
 public:
  static constexpr int kPageBits = 16;
  static constexpr std::uintptr_t kSpan = 4;  // pages mapped either side of the first one (256 KiB)

  std::uint32_t address(const void* pointer) {
    reset();
    const auto p = reinterpret_cast<std::uintptr_t>(pointer);
    const std::uintptr_t page = p >> kPageBits;
    const std::uintptr_t low = p & ((std::uintptr_t{1} << kPageBits) - 1);
    for (const Region& r : regions_) {
      if (page >= r.firstPage && page < r.firstPage + r.pages)
        return static_cast<std::uint32_t>(((r.firstSlot + (page - r.firstPage)) << kPageBits) | low);
    }
    std::uintptr_t first = page >= kSpan ? page - kSpan : 0, last = page + kSpan + 1;
    for (const Region& r : regions_) {  // never overlap a region already mapped
      const std::uintptr_t end = r.firstPage + r.pages;
      if (end <= page && end > first) first = end;
      if (r.firstPage > page && r.firstPage < last) last = r.firstPage;
    }
    const std::uintptr_t pages = last - first;
    if (nextSlot_ + pages >= (std::uintptr_t{1} << (32 - kPageBits))) throw SimTrap{"too many distinct shared-memory regions for 32-bit addresses"};
    regions_.push_back(Region{first, pages, nextSlot_});
    nextSlot_ += pages;
    return address(pointer);
  }

  void* pointer(std::uint64_t address, int line) {
    reset();
    const std::uint64_t slot = address >> kPageBits;
    if (address >> 32 == 0) {
      for (const Region& r : regions_) {
        if (slot >= r.firstSlot && slot < r.firstSlot + r.pages) {
          return reinterpret_cast<void*>(((r.firstPage + (slot - r.firstSlot)) << kPageBits) | (address & ((1u << kPageBits) - 1)));
        }
      }
    }
    throw SimTrap{
        format("0x%llx is not a shared-memory address (a generic pointer where a .shared address belongs? convert it with "
               "__cvta_generic_to_shared) (line %d)",
               static_cast<unsigned long long>(address), line)};
  }

 private:
  struct Region {
    std::uintptr_t firstPage, pages, firstSlot;
  };
  // Addresses belong to one block; a host thread runs one block at a time.
  void reset() {
    const std::uint64_t serial = tls_thread ? tls_thread->block->serial : 0;
    if (serial != serial_) {
      regions_.clear();
      nextSlot_ = 1;
      serial_ = serial;
    }
  }
  std::vector<Region> regions_;
  std::uintptr_t nextSlot_ = 1;
  std::uint64_t serial_ = ~std::uint64_t{0};
};

thread_local SharedWindow window;

// Where this host thread's shared memory is: the block's dynamic buffer, and the thread-local blocks
// of the loaded modules (a candidate's `__shared__` variables are thread-locals of its library), but
// the runtime's own. Module ranges are cached per host thread and refreshed when a pointer is not in
// them (a library loaded since).
class SharedMemoryMap {
 public:
  bool contains(const void* pointer) {
    const auto p = reinterpret_cast<std::uintptr_t>(pointer);
    if (const ThreadContext* t = tls_thread) {
      const auto dyn = reinterpret_cast<std::uintptr_t>(t->block->dynamicShared);
      if (p >= dyn && p <= dyn + t->block->dynamicSharedBytes && t->block->dynamicSharedBytes > 0) return true;
    }
    if (inModules(p)) return true;
    refresh();
    return inModules(p);
  }

 private:
  bool inModules(std::uintptr_t p) const {
    for (const auto& [begin, end] : modules_) {
      if (p >= begin && p <= end) return true;  // one past the end too: a loop's bound
    }
    return false;
  }
  void refresh() {
    modules_.clear();
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* self) {
          if (info->dlpi_tls_data == nullptr) return 0;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            if (info->dlpi_phdr[i].p_type != PT_TLS) continue;
            const auto begin = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data), end = begin + info->dlpi_phdr[i].p_memsz;
            const auto runtime = reinterpret_cast<std::uintptr_t>(&tls_thread);  // the simulator's own thread-locals
            if (runtime < begin || runtime >= end) static_cast<SharedMemoryMap*>(self)->modules_.emplace_back(begin, end);
          }
          return 0;
        },
        this);
  }
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> modules_;
};

thread_local SharedMemoryMap sharedMemory;

struct Copy {
  void* dst;
  const void* src;
  std::size_t bytes, zeros;
};

struct ThreadCopies {
  std::vector<Copy> open;                 // since the last commit
  std::vector<std::vector<Copy>> groups;  // committed, oldest first
};

// The running CUDA thread's copies; a new block starts with none (copies never waited for are
// dropped, as a GPU gives no guarantee they landed).
ThreadCopies& currentCopies() {
  thread_local std::uint64_t serial = 0;
  thread_local std::vector<ThreadCopies> threads;
  const ThreadContext* t = tls_thread;
  if (t == nullptr) throw SimTrap{"an asynchronous copy outside a kernel"};
  if (serial != t->block->serial) {
    threads.clear();
    serial = t->block->serial;
  }
  const std::size_t n = std::size_t{t->block->blockDim.x} * t->block->blockDim.y * t->block->blockDim.z;
  if (threads.size() < n) threads.resize(n);
  return threads[t->linear];
}

// The current block's cuda::barrier copies, by barrier.
std::vector<std::pair<const void*, std::vector<Copy>>>& barrierCopies() {
  thread_local std::uint64_t serial = 0;
  thread_local std::vector<std::pair<const void*, std::vector<Copy>>> copies;
  const ThreadContext* t = tls_thread;
  if (t == nullptr) throw SimTrap{"a cuda::barrier copy outside a kernel"};
  if (serial != t->block->serial) {
    copies.clear();
    serial = t->block->serial;
  }
  return copies;
}

std::vector<Copy>* copiesOf(const void* barrier, bool create) {
  auto& all = barrierCopies();
  for (auto& [b, c] : all) {
    if (b == barrier) return &c;
  }
  if (!create) return nullptr;
  return &all.emplace_back(barrier, std::vector<Copy>{}).second;
}

void land(const std::vector<Copy>& group) {
  for (const Copy& c : group) {
    std::memcpy(c.dst, c.src, c.bytes - c.zeros);
    std::memset(static_cast<char*>(c.dst) + (c.bytes - c.zeros), 0, c.zeros);
  }
}

}  // namespace

std::uint32_t shared_address(const void* pointer) {
  if (!sharedMemory.contains(pointer)) {
    throw SimTrap{
        format("%p is not in shared memory, so it has no shared-memory address (__cvta_generic_to_shared or cvta.to.shared of a "
               "pointer to global or local memory)",
               pointer)};
  }
  return window.address(pointer);
}
void* shared_pointer(std::uint64_t address, int line) { return window.pointer(address, line); }

void async_copy(void* dst, const void* src, std::size_t bytes, std::size_t zeroFill, int line) {
  if (bytes != 4 && bytes != 8 && bytes != 16)
    throw SimTrap{format("asynchronous copy of %zu bytes: the size must be 4, 8 or 16 (line %d)", bytes, line)};
  if (zeroFill > bytes) throw SimTrap{format("asynchronous copy: %zu bytes to zero-fill in a %zu-byte copy (line %d)", zeroFill, bytes, line)};
  if (reinterpret_cast<std::uintptr_t>(dst) % bytes != 0 || reinterpret_cast<std::uintptr_t>(src) % bytes != 0) {
    throw SimTrap{format("asynchronous copy of %zu bytes from a misaligned address (source and destination must be aligned to the size) (line %d)",
                         bytes, line)};
  }
  currentCopies().open.push_back({dst, src, bytes, zeroFill});
}

void barrier_attach(const void* barrier, void* dst, const void* src, std::size_t bytes) { copiesOf(barrier, true)->push_back({dst, src, bytes, 0}); }
void barrier_land(const void* barrier) {
  if (std::vector<Copy>* c = copiesOf(barrier, false)) {
    land(*c);
    c->clear();
  }
}
void barrier_drop(const void* barrier) {
  if (std::vector<Copy>* c = copiesOf(barrier, false)) c->clear();
}

void async_copy_bytes(void* dst, const void* src, std::size_t bytes) { currentCopies().open.push_back({dst, src, bytes, 0}); }

void async_commit() {
  ThreadCopies& c = currentCopies();
  c.groups.push_back(std::move(c.open));
  c.open.clear();
}

void async_wait(std::size_t prior) {
  ThreadCopies& c = currentCopies();
  while (c.groups.size() > prior) {
    land(c.groups.front());
    c.groups.erase(c.groups.begin());
  }
}

}  // namespace cuset_sim
