#pragma once
// Compiles CUDA source for the simulator and runs its kernels in this process, for tests of the
// simulator's primitives with known answers.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/sandbox/sim_library.hpp"
#include "cuset_sim/runtime.hpp"
#include "test_util.hpp"

namespace cuset::test {

// Host encodings of the device types, exact for the small integers used here.
inline std::uint16_t halfBits(float f) {
  if (f == 0.0f) return 0;
  const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  const int exponent = static_cast<int>((b >> 23) & 0xff) - 127;
  return static_cast<std::uint16_t>(((b >> 16) & 0x8000u) | static_cast<std::uint32_t>(exponent + 15) << 10 | ((b >> 13) & 0x3ffu));
}
inline float fromHalf(std::uint16_t h) {
  if ((h & 0x7fffu) == 0) return 0.0f;
  const std::uint32_t b = (h & 0x8000u) << 16 | static_cast<std::uint32_t>(((h >> 10) & 0x1f) - 15 + 127) << 23 | (h & 0x3ffu) << 13;
  return std::bit_cast<float>(b);
}
inline std::uint16_t bf16Bits(float f) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16); }

class SimModule {
 public:
  SimModule(const std::string& source, const std::vector<std::string>& kernels, SimBuildChecks checks = {}) {
    static TempDir cache;  // one per test binary: compiled libraries are reused across tests
    const SimCompiler compiler(SimToolchain::fromBuild(), cache.path());
    const SimCompileOutput out = compiler.compile(source, kernels, checks);
    compileLog = out.unsupported.empty() ? out.log : out.unsupported;
    unsupported = out.unsupported;
    fibers = out.needsFibers;
    if (!out.ok) return;
    auto lib = SimLibrary::open(out.library);
    if (!lib) {
      compileLog = lib.error();
      return;
    }
    library_.emplace(std::move(lib).value());
  }

  bool ok() const { return library_.has_value(); }
  const cuset_sim::KernelEntry* entry(const std::string& name) const { return library_->entry(name); }

  // args: pointers to each parameter's value, as cuLaunchKernel takes them.
  cuset_sim::LaunchOutcome launch(const std::string& name, dim3 grid, dim3 block, std::vector<void*> args, std::size_t shared = 0,
                                  bool reverse = false, cuset_sim::SharedAccesses accesses = cuset_sim::SharedAccesses::unchecked,
                                  bool raceAcrossBlocks = true) const {
    cuset_sim::LaunchSpec spec;
    spec.kernel = entry(name);
    spec.args = args.data();
    spec.grid[0] = grid.x, spec.grid[1] = grid.y, spec.grid[2] = grid.z;
    spec.block[0] = block.x, spec.block[1] = block.y, spec.block[2] = block.z;
    spec.dynamicSharedBytes = shared;
    cuset_sim::LaunchOptions options;
    options.useFibers = fibers;
    options.reverseThreadOrder = reverse;
    options.sharedAccesses = accesses;
    options.raceAcrossBlocks = raceAcrossBlocks;
    return cuset_sim::run_launch(spec, options);
  }

  std::string compileLog;
  std::string unsupported;  // why the simulator cannot run the source, when it cannot
  bool fibers = true;

 private:
  std::optional<SimLibrary> library_;
};

}  // namespace cuset::test
