#pragma once
// Inaccessible pages after the inputs of a trial (RegionLayout::Fences::afterInputs): a kernel that
// reads past the end of an input faults there, and the fault is reported as that read, naming the
// input and how far past its end, instead of as an anonymous SIGSEGV.
#include <atomic>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "cuset/evaluator/correctness/device_region.hpp"

namespace cuset::detail {

// Where the child reports a fault in a fence: the message buffer and the kind to store when done.
struct FenceReport {
  std::span<char> message;
  std::atomic<int>* kind = nullptr;
  int runtimeErrorKind = 0;
};

// Makes each fence of `fences` ([{"name", "data_end", "fence", "bytes"}], offsets into `region`)
// inaccessible and installs the SIGSEGV handler that reports faults in them. Returns what failed, or "".
std::string protectInputFences(const nlohmann::json& fences, std::byte* region, FenceReport report);

// The job field for `layout`'s fences.
nlohmann::json fencesToJson(const RegionLayout& layout);

}  // namespace cuset::detail
