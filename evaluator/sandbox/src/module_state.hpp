#pragma once
// A candidate's `__device__` state across its trials, as a GPU keeps it: a module stays loaded for a
// candidate's whole evaluation there, so globals written by one launch are seen by every later launch
// and trial. Each simulator trial runs in a fresh child that loads the library anew, so the worker
// keeps the library's writable data (.data, .bss, .got.plt: the PT_LOAD segments with PF_W, less
// PT_GNU_RELRO) between a candidate's trials in shared memory: the child restores it after loading and
// saves it after its launches. A kernel that counts launches or caches results in globals then behaves
// on the simulator as it would on a GPU. Private to the sandbox.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset::detail {

struct WritableRange {
  std::uint64_t offset;  // from the library's load address
  std::uint64_t bytes;
};

// The writable data of a shared library, from its program headers (bounds-checked).
Expected<std::vector<WritableRange>> writableRanges(std::span<const std::byte> elf);

// The saved data of one library, in memory the worker shares with its children.
class ModuleState {
 public:
  ModuleState() = default;
  ModuleState(std::vector<WritableRange> ranges);  // maps the shared buffer
  ~ModuleState();
  ModuleState(ModuleState&& other) noexcept;
  ModuleState& operator=(ModuleState&& other) noexcept;
  ModuleState(const ModuleState&) = delete;
  ModuleState& operator=(const ModuleState&) = delete;

  // In the child, after loading at `base`: copy a saved state into the library (when one was saved
  // by a child that loaded it at the same address: pointers in it are absolute).
  void restore(std::uintptr_t base) const;
  // In the child, after the launches. A child that dies while saving leaves no state, not a torn one.
  void save(std::uintptr_t base);
  bool valid() const;

 private:
  struct Header {
    std::uint64_t valid;
    std::uint64_t base;
  };
  std::vector<WritableRange> ranges_;
  std::size_t bytes_ = 0;
  Header* shared_ = nullptr;  // header, then the ranges' bytes in order
};

}  // namespace cuset::detail
