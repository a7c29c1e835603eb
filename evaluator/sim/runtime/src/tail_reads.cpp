// Reads of the up-to-15 bytes after a buffer whose size is not a multiple of 16, inside its last
// 16-byte granule. A page fence cannot sit there without misaligning the buffer's start (legal float4
// loads would fault), so when a trial's layout has such tails the candidate library is built with its
// loads instrumented (sim_compiler.cpp: GCC's -fsanitize=kernel-address in call mode, loads only, no
// stack or globals): every load calls the prelude's __asan_loadN_noabort, which sends a load ending
// in a page's last 16 bytes here, and this ends the launch when it touches a tail. Tails are set only
// for layouts whose buffers end against a fence page (tailsToJson), so each ends where a page does.
// Writes need no instrumentation: the tail holds guard bytes, which the supervisor compares after the
// trial. A GPU does not fault on these reads either; compute-sanitizer's memcheck
// reports them, and the simulator judges out-of-bounds reads as memcheck does (decision 97).
#include <array>
#include <cstdint>
#include <cstdio>

#include "block_runner.hpp"
#include "cuset_sim/runtime.hpp"

namespace cuset_sim {
namespace {

struct Tail {
  std::uintptr_t begin = 0, end = 0;
  std::size_t bufferBytes = 0;
  std::array<char, 16> role{};
  std::array<char, 64> name{};
};

// Written by the worker between launches, read by every host thread during one: no lock, the launch
// itself orders them.
std::array<Tail, 1024> g_tails;
std::size_t g_tailCount = 0;

[[noreturn]] void report(const Tail& t, std::uintptr_t address, std::size_t size) {
  const std::uintptr_t last = std::min(address + size, t.end);
  throw detail::SimTrap{detail::format("out-of-bounds read past the end of %s '%s' by %zu byte(s) (a %zu-byte buffer; a %zu-byte load at 0x%llx)",
                                       t.role.data(), t.name.data(), static_cast<std::size_t>(last - t.begin), t.bufferBytes, size,
                                       static_cast<unsigned long long>(address))};
}

inline void check(std::uintptr_t address, std::size_t size) {
  for (std::size_t i = 0; i < g_tailCount; ++i) {
    const Tail& t = g_tails[i];
    if (address < t.end && address + size > t.begin) report(t, address, size);
  }
}

}  // namespace

void set_tail_ranges(const std::vector<TailRange>& ranges) {
  g_tailCount = 0;
  for (const TailRange& r : ranges) {
    if (g_tailCount == g_tails.size()) break;
    Tail& t = g_tails[g_tailCount++];
    t.begin = reinterpret_cast<std::uintptr_t>(r.begin);
    t.end = reinterpret_cast<std::uintptr_t>(r.end);
    t.bufferBytes = r.bufferBytes;
    std::snprintf(t.role.data(), t.role.size(), "%s", r.role.c_str());
    std::snprintf(t.name.data(), t.name.size(), "%s", r.name.c_str());
  }
}

namespace detail {
void check_tail_read(const void* address, std::size_t size) { check(reinterpret_cast<std::uintptr_t>(address), size); }
}  // namespace detail

}  // namespace cuset_sim

// Reached from the prelude's __asan_loadN_noabort for a load ending in a page's last 16 bytes.
extern "C" void cuset_sim_tail_read(std::uintptr_t address, std::size_t size) { cuset_sim::check(address, size); }
