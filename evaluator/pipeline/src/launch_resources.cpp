#include "launch_resources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "cuset/evaluator/candidate/plan_validator.hpp"

namespace cuset {

ThreadLimit maxThreadsPerBlock(const KernelResources& r) {
  ThreadLimit limit{BlockResourceLimits::maxThreadsPerBlock, ""};
  if (r.maxThreads > 0 && r.maxThreads < limit.threads) limit = {r.maxThreads, fmt::format("__launch_bounds__({})", r.maxThreads)};
  if (r.registers > 0) {
    constexpr unsigned unit = BlockResourceLimits::registerAllocationUnit;
    const unsigned perWarp = (r.registers * 32 + unit - 1) / unit * unit;
    const unsigned threads = BlockResourceLimits::registersPerBlock / perWarp * 32;
    if (threads < limit.threads) {
      limit = {threads, fmt::format("{} registers per thread: {} registers per block allow {} warps", r.registers,
                                    BlockResourceLimits::registersPerBlock, threads / 32)};
    }
  }
  return limit;
}

namespace {

std::optional<LaunchRefusal> refusedLaunch(const std::string& set, const LaunchPlan& plan, const std::map<std::string, KernelResources>& resources) {
  for (const auto& step : plan.steps) {
    if (step.kind != PlanStep::Kind::kernel) continue;
    const KernelStep& k = step.kernel;
    const auto it = resources.find(k.kernel);
    if (it == resources.end()) continue;  // a PTX target: the driver's JIT decides, on the GPU
    const KernelResources& r = it->second;
    const std::int64_t dynamic = k.sharedBytes;
    if (static_cast<std::int64_t>(r.staticSharedBytes) + dynamic > LaunchLimits::maxSharedBytes + LaunchLimits::reservedSharedBytes) {
      return LaunchRefusal{Verdict::invalid_submission,
                           fmt::format("kernel {} uses {} bytes of static and, with sizes '{}', {} bytes of dynamic shared memory: over the "
                                       "{} bytes a block can have",
                                       k.kernel, r.staticSharedBytes, set, dynamic, LaunchLimits::maxSharedBytes)};
    }
    const unsigned threads = k.block[0] * k.block[1] * k.block[2];
    const ThreadLimit limit = maxThreadsPerBlock(r);
    if (threads > limit.threads) {
      return LaunchRefusal{Verdict::runtime_error,
                           fmt::format("too many resources requested for launch: kernel {} with sizes '{}' is launched with {} threads per "
                                       "block ({}x{}x{}), but it can run at most {} ({}); the driver refuses the launch",
                                       k.kernel, set, threads, k.block[0], k.block[1], k.block[2], limit.threads, limit.why)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<LaunchRefusal> refusedLaunch(const std::map<std::string, LaunchPlan>& plans, const std::map<std::string, KernelResources>& resources,
                                           const std::string& judged) {
  if (auto it = plans.find(judged); it != plans.end()) {
    if (auto refused = refusedLaunch(it->first, it->second, resources)) return refused;
  }
  for (const auto& [set, plan] : plans) {
    if (auto refused = refusedLaunch(set, plan, resources)) return refused;
  }
  return std::nullopt;
}

}  // namespace cuset
