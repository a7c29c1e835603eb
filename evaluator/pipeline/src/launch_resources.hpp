#pragma once
// The launches a GPU refuses before running anything, decided from what the compiled kernel needs
// (the cubin's registers, __launch_bounds__ and static shared memory) and each size set's geometry,
// so every backend gives the driver's verdict: the simulator would otherwise run a kernel that a GPU
// never starts.
#include <map>
#include <optional>
#include <string>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/compile/cubin_symbols.hpp"
#include "cuset/evaluator/results/verdict.hpp"

namespace cuset {

// Per-block limits shared by sm_80 through sm_120 (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability"); registers are allocated per warp in units of 256.
struct BlockResourceLimits {
  static constexpr unsigned registersPerBlock = 65536;
  static constexpr unsigned registerAllocationUnit = 256;  // per warp
  static constexpr unsigned maxThreadsPerBlock = 1024;
};

// The most threads per block a launch of a kernel with `r` may have (cuFuncGetAttribute's
// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), with what limits it: "__launch_bounds__(128)",
// "72 registers per thread", or "" for the device's 1024.
struct ThreadLimit {
  unsigned threads;
  std::string why;
};
ThreadLimit maxThreadsPerBlock(const KernelResources& r);

struct LaunchRefusal {
  Verdict verdict;
  std::string reason;
};

// The first launch of any size set's plan a GPU would refuse, with the driver's verdict: more static
// plus dynamic shared memory than a block can have (invalid_submission, as before launch resources
// were read), or more threads than the kernel's registers or launch bounds allow (runtime_error, "too
// many resources requested for launch"). The size set `judged` is looked at first, so the reason
// names the sizes the run judges.
std::optional<LaunchRefusal> refusedLaunch(const std::map<std::string, LaunchPlan>& plans, const std::map<std::string, KernelResources>& resources,
                                           const std::string& judged);

}  // namespace cuset
