#include "buffer_fences.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "cuset/evaluator/region/device_region.hpp"
#include "cuset_sim/runtime.hpp"

namespace cuset::detail {
namespace {

struct Fence {
  std::uintptr_t begin = 0, end = 0;  // the inaccessible page(s)
  bool before = false;                // the page precedes the data (else it follows it)
  std::uintptr_t dataEdge = 0;        // the data's first byte (before) or one past its last (after)
  std::size_t bytes = 0;              // the buffer's size
  std::array<char, 64> name{};
  std::array<char, 16> role{};
};

// Read by the signal handler: filled before it is installed, never changed after. Room for every
// buffer of a large network (level 3: a hundred weights and more).
std::array<Fence, 1024> g_fences;
std::size_t g_fenceCount = 0;
FenceReport g_report;

// Async-signal-safe formatting into the report buffer.
struct Writer {
  std::span<char> out;
  std::size_t used = 0;
  Writer& text(const char* s) {
    while (*s != '\0' && used + 1 < out.size()) out[used++] = *s++;
    return *this;
  }
  Writer& number(std::uint64_t v) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0 && used + 1 < out.size()) out[used++] = digits[--n];
    return *this;
  }
  void finish() {
    if (!out.empty()) out[std::min(used, out.size() - 1)] = '\0';
  }
};

void onFault(int sig, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (std::size_t i = 0; i < g_fenceCount; ++i) {
    const Fence& f = g_fences[i];
    if (address < f.begin || address >= f.end) continue;
    bool write = false;
#if defined(__x86_64__)
    write = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;
#else
    (void)context;
#endif
    Writer w{g_report.message};
    w.text(write ? "out-of-bounds write" : "out-of-bounds read").text(f.before ? " before the start of " : " past the end of ");
    w.text(f.role.data()).text(" '").text(f.name.data()).text("' by ");
    w.number(f.before ? f.dataEdge - address : address - f.dataEdge + 1).text(" byte(s) (a ").number(f.bytes).text("-byte buffer)");
    w.finish();
    g_report.kind->store(g_report.runtimeErrorKind);
    ::_exit(96);
  }
  // Not a fence: SA_RESETHAND has restored the default action (no system call, which the running
  // filter would refuse), so the access faults again on return and the worker sees the SIGSEGV.
  (void)sig;
}

}  // namespace

std::string protectBufferFences(const nlohmann::json& fences, std::byte* region, FenceReport report) {
  g_report = report;
  g_fenceCount = 0;
  for (const auto& f : fences) {
    if (g_fenceCount == g_fences.size()) break;  // a problem with more buffers than this keeps the rest unfenced
    Fence& fence = g_fences[g_fenceCount++];
    fence.begin = reinterpret_cast<std::uintptr_t>(region + f.at("fence").get<std::size_t>());
    fence.end = fence.begin + f.at("bytes").get<std::size_t>();
    fence.before = f.at("side").get<std::string>() == "before";
    fence.dataEdge = reinterpret_cast<std::uintptr_t>(region + f.at("data_edge").get<std::size_t>());
    fence.bytes = f.at("size").get<std::size_t>();
    const std::string name = f.at("name").get<std::string>();
    std::snprintf(fence.name.data(), fence.name.size(), "%s", name.c_str());
    std::snprintf(fence.role.data(), fence.role.size(), "%s", f.at("role").get<std::string>().c_str());
    if (::mprotect(reinterpret_cast<void*>(fence.begin), fence.end - fence.begin, PROT_NONE) != 0) {
      return "cannot protect the page next to " + std::string(fence.role.data()) + " '" + name + "': " + std::strerror(errno);
    }
  }
  if (g_fenceCount == 0) return "";
  struct sigaction action {};
  action.sa_sigaction = onFault;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  ::sigaction(SIGSEGV, &action, nullptr);
  return "";
}

nlohmann::json fencesToJson(const RegionLayout& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : layout.slots()) {
    if (s.fence == 0) continue;
    out.push_back({{"name", s.name},
                   {"role", roleName(s.role)},
                   {"side", s.fenceBefore ? "before" : "after"},
                   {"data_edge", s.fenceBefore ? s.offset : s.offset + s.bytes},
                   {"fence", s.fence},
                   {"bytes", RegionLayout::fencePageBytes()},
                   {"size", s.bytes}});
  }
  return out;
}

nlohmann::json tailsToJson(const RegionLayout& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : layout.slots()) {
    // Only where the granule's end is a fence page's start: the prelude's check looks nowhere else.
    if (s.bytes % 16 == 0 || s.fence == 0 || s.fenceBefore) continue;
    const std::size_t end = s.offset + s.bytes;
    out.push_back({{"name", s.name}, {"role", roleName(s.role)}, {"begin", end}, {"end", (end + 15) / 16 * 16}, {"size", s.bytes}});
  }
  return out;
}

void setTailReads(const nlohmann::json& tails, std::byte* region) {
  std::vector<cuset_sim::TailRange> ranges;
  for (const auto& t : tails) {
    ranges.push_back({region + t.at("begin").get<std::size_t>(), region + t.at("end").get<std::size_t>(), t.at("size").get<std::size_t>(),
                      t.at("role").get<std::string>(), t.at("name").get<std::string>()});
  }
  cuset_sim::set_tail_ranges(ranges);
}

nlohmann::json watchedBuffersToJson(const RegionLayout& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : layout.slots()) out.push_back({{"name", s.name}, {"role", roleName(s.role)}, {"offset", s.offset}, {"size", s.bytes}});
  return out;
}

void setWatchedBuffers(const nlohmann::json& buffers, std::byte* region) {
  std::vector<cuset_sim::WatchedBuffer> watched;
  for (const auto& b : buffers) {
    watched.push_back({region + b.at("offset").get<std::size_t>(), b.at("size").get<std::size_t>(), b.at("role").get<std::string>(),
                       b.at("name").get<std::string>()});
  }
  cuset_sim::watch_global_buffers(watched);
}

}  // namespace cuset::detail
