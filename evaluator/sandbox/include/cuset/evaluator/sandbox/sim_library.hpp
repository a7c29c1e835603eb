#pragma once
// A candidate library built by SimCompiler, loaded into this process: its kernel entry table.
#include <cstdint>
#include <filesystem>
#include <string>

#include "cuset/common/expected.hpp"
#include "cuset_sim/runtime.hpp"

namespace cuset {

class SimLibrary {
 public:
  // dlopen(RTLD_NOW) and look up the `cuset_sim_kernels` table; the error says what failed.
  static Expected<SimLibrary> open(const std::filesystem::path& path);
  SimLibrary(SimLibrary&& other) noexcept;
  SimLibrary& operator=(SimLibrary&& other) noexcept;
  SimLibrary(const SimLibrary&) = delete;
  SimLibrary& operator=(const SimLibrary&) = delete;
  ~SimLibrary();

  const cuset_sim::KernelEntry* entry(std::string_view name) const;  // nullptr if absent
  std::uintptr_t loadAddress() const;                                // where the loader placed the library (its link map's l_addr)

 private:
  SimLibrary() = default;
  void* handle_ = nullptr;
  const cuset_sim::KernelEntry* entries_ = nullptr;
  int count_ = 0;
};

}  // namespace cuset
