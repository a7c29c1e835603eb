#pragma once
// Inaccessible pages next to the buffers of a trial (RegionLayout::Fences): a kernel that reads or
// writes past the end or before the start of an input, output or workspace faults there, and the fault
// is reported as that access, naming the buffer and how far outside it, instead of as an anonymous
// SIGSEGV.
#include <atomic>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "cuset/evaluator/region/device_region.hpp"

namespace cuset::detail {

// Where the child reports a fault in a fence: the message buffer and the kind to store when done.
struct FenceReport {
  std::span<char> message;
  std::atomic<int>* kind = nullptr;
  int runtimeErrorKind = 0;
};

// Makes each fence of `fences` ([{"name", "role", "side", "data_edge", "fence", "bytes", "size"}],
// offsets into `region`)
// inaccessible and installs the SIGSEGV handler that reports faults in them. Returns what failed, or "".
std::string protectBufferFences(const nlohmann::json& fences, std::byte* region, FenceReport report);

// The job field for `layout`'s fences.
nlohmann::json fencesToJson(const RegionLayout& layout);

// The job field for `layout`'s buffer tails ([{"name", "role", "begin", "end", "size"}], offsets into
// the region): the bytes after each buffer whose size is not a multiple of 16, to the end of its last
// 16-byte granule, where no fence can sit. Only a layout whose buffers end against their fence has
// any: there each tail ends where a page does, which the instrumented loads' fast path relies on.
nlohmann::json tailsToJson(const RegionLayout& layout);
// Hands `tails` (tailsToJson) to the simulator's runtime, as addresses in `region`.
void setTailReads(const nlohmann::json& tails, std::byte* region);

// The job field for a race-checked trial: every buffer of `layout` ([{"name", "role", "offset", "size"}]),
// which the race check watches in global memory.
nlohmann::json watchedBuffersToJson(const RegionLayout& layout);
// Hands `buffers` (watchedBuffersToJson) to the simulator's runtime, as addresses in `region`.
void setWatchedBuffers(const nlohmann::json& buffers, std::byte* region);

}  // namespace cuset::detail
