#pragma once
// Compiles CUDA source for the simulator and runs its kernels in this process, for tests of the
// simulator's primitives with known answers.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuset/evaluator/sim_compiler.hpp"
#include "cuset_sim/runtime.hpp"
#include "test_util.hpp"

namespace cuset::test {

class SimModule {
 public:
  SimModule(const std::string& source, const std::vector<std::string>& kernels) {
    static TempDir cache;  // one per test binary: compiled libraries are reused across tests
    const SimCompiler compiler(SimToolchain::fromBuild(), cache.path());
    const SimCompileOutput out = compiler.compile(source, kernels);
    compileLog = out.log;
    fibers = out.needsFibers;
    if (!out.ok) return;
    handle_ = ::dlopen(out.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      compileLog = ::dlerror();
      return;
    }
    auto table = reinterpret_cast<const cuset_sim::KernelEntry* (*)(int*)>(::dlsym(handle_, "cuset_sim_kernels"));
    entries_ = table(&count_);
  }
  ~SimModule() {
    if (handle_) ::dlclose(handle_);
  }
  SimModule(const SimModule&) = delete;
  SimModule& operator=(const SimModule&) = delete;

  bool ok() const { return entries_ != nullptr; }
  const cuset_sim::KernelEntry* entry(const std::string& name) const {
    for (int i = 0; i < count_; ++i) {
      if (name == entries_[i].name) return &entries_[i];
    }
    return nullptr;
  }

  // args: pointers to each parameter's value, as cuLaunchKernel takes them.
  cuset_sim::LaunchOutcome launch(const std::string& name, dim3 grid, dim3 block, std::vector<void*> args, std::size_t shared = 0,
                                  bool reverse = false) const {
    cuset_sim::LaunchSpec spec;
    spec.kernel = entry(name);
    spec.args = args.data();
    spec.grid[0] = grid.x, spec.grid[1] = grid.y, spec.grid[2] = grid.z;
    spec.block[0] = block.x, spec.block[1] = block.y, spec.block[2] = block.z;
    spec.dynamicSharedBytes = shared;
    cuset_sim::LaunchOptions options;
    options.useFibers = fibers;
    options.reverseThreadOrder = reverse;
    return cuset_sim::run_launch(spec, options);
  }

  std::string compileLog;
  bool fibers = true;

 private:
  void* handle_ = nullptr;
  const cuset_sim::KernelEntry* entries_ = nullptr;
  int count_ = 0;
};

}  // namespace cuset::test
