#include "cuset/evaluator/sandbox/sim_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <utility>

namespace cuset {

Expected<SimLibrary> SimLibrary::open(const std::filesystem::path& path) {
  SimLibrary lib;
  lib.handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.handle_ == nullptr) return Unexpected{std::string("cannot load the kernel library: ") + ::dlerror()};
  using TableFn = const cuset_sim::KernelEntry* (*)(int*);
  auto table = reinterpret_cast<TableFn>(::dlsym(lib.handle_, "cuset_sim_kernels"));
  if (table == nullptr) return Unexpected{"the kernel library has no cuset_sim_kernels table"};
  lib.entries_ = table(&lib.count_);
  return lib;
}

SimLibrary::SimLibrary(SimLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), entries_(std::exchange(other.entries_, nullptr)), count_(std::exchange(other.count_, 0)) {}

SimLibrary& SimLibrary::operator=(SimLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    entries_ = std::exchange(other.entries_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

SimLibrary::~SimLibrary() {
  if (handle_) ::dlclose(handle_);
}

std::uintptr_t SimLibrary::loadAddress() const {
  link_map* map = nullptr;
  if (handle_ == nullptr || ::dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return 0;
  return static_cast<std::uintptr_t>(map->l_addr);
}

const cuset_sim::KernelEntry* SimLibrary::entry(std::string_view name) const {
  for (int i = 0; i < count_; ++i) {
    if (name == entries_[i].name) return &entries_[i];
  }
  return nullptr;
}

}  // namespace cuset
