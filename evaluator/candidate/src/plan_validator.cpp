#include "cuset/evaluator/candidate/plan_validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cuset/evaluator/candidate/launch_plan.hpp"

namespace cuset {
namespace {

PlanViolation violation(PlanViolation::Kind kind, std::string message) { return {kind, std::move(message)}; }

const PlanBuffer* find(const PlanBuffers& buffers, const std::string& name) {
  const auto it = buffers.find(name);
  return it == buffers.end() ? nullptr : &it->second;
}

}  // namespace

std::optional<PlanViolation> checkLaunchConfiguration(std::string_view where, const std::array<std::int64_t, 3>& grid,
                                                      const std::array<std::int64_t, 3>& block, std::int64_t sharedBytes) {
  static constexpr char kAxis[] = {'x', 'y', 'z'};
  for (std::size_t d = 0; d < 3; ++d) {
    for (const auto& [what, value, limit] :
         {std::tuple{"grid", grid[d], LaunchLimits::maxGrid[d]}, std::tuple{"block", block[d], LaunchLimits::maxBlock[d]}}) {
      if (value < 1 || value > limit) {
        return violation(PlanViolation::Kind::launchConfiguration,
                         fmt::format("{}: {}.{} = {} is outside [1, {}] (invalid configuration argument)", where, what, kAxis[d], value, limit));
      }
    }
  }
  if (const std::int64_t threads = block[0] * block[1] * block[2]; threads > LaunchLimits::maxThreadsPerBlock) {
    return violation(PlanViolation::Kind::launchConfiguration,
                     fmt::format("{}: {} threads per block, over the limit of {} (invalid configuration argument)", where, threads,
                                 LaunchLimits::maxThreadsPerBlock));
  }
  if (sharedBytes < 0 || sharedBytes > LaunchLimits::maxSharedBytes) {
    return violation(PlanViolation::Kind::launchConfiguration,
                     fmt::format("{}: shared_bytes = {} is outside [0, {}], the dynamic shared memory a block can have", where, sharedBytes,
                                 LaunchLimits::maxSharedBytes));
  }
  return std::nullopt;
}

std::optional<PlanViolation> checkBufferSize(std::string_view name, DType dtype, std::int64_t numel) {
  std::int64_t bytes = 0;
  if (numel < 1) return violation(PlanViolation::Kind::malformed, fmt::format("buffer '{}' has {} elements", name, numel));
  if (__builtin_mul_overflow(numel, static_cast<std::int64_t>(dtypeSize(dtype)), &bytes) || bytes > kMaxTensorBytes) {
    return violation(PlanViolation::Kind::malformed, fmt::format("buffer '{}' is absurdly large (over {} GiB)", name, kMaxTensorBytes >> 30));
  }
  return std::nullopt;
}

std::optional<PlanViolation> checkView(const TensorView& v, const PlanBuffers& buffers) {
  const PlanBuffer* b = find(buffers, v.buffer);
  if (!b) return violation(PlanViolation::Kind::malformed, fmt::format("a view of an unknown buffer '{}'", v.buffer));
  if (v.dtype != b->dtype) return violation(PlanViolation::Kind::malformed, "a view's dtype is not its buffer's");
  if (v.sizes.size() != v.strides.size() || v.offset < 0) return violation(PlanViolation::Kind::malformed, "a view is malformed");
  std::int64_t last = v.offset;
  for (std::size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] < 0 || v.strides[d] < 0) return violation(PlanViolation::Kind::malformed, "a view has a negative size or stride");
    if (v.sizes[d] == 0) return std::nullopt;  // empty: nothing is touched
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(v.sizes[d] - 1, v.strides[d], &reach) || __builtin_add_overflow(last, reach, &last)) last = b->numel;
  }
  if (last >= b->numel) return violation(PlanViolation::Kind::malformed, fmt::format("a view reaches past the end of buffer '{}'", v.buffer));
  return std::nullopt;
}

std::optional<PlanViolation> checkView(const nlohmann::json& view, const PlanBuffers& buffers) {
  const auto v = tensorViewFromJson(view);
  if (!v) return violation(PlanViolation::Kind::malformed, v.error());
  return checkView(*v, buffers);
}

PlanBuffers problemBuffers(const Problem& problem, const SizeBindings& sizes) {
  PlanBuffers out;
  for (const auto* list : {&problem.inputs, &problem.outputs}) {
    for (const auto& t : *list) {
      // The problem's own shapes and sizes: checked when it was loaded.
      out[t.name] = {t.dtype, *elementCount(*evaluateShape(t, sizes))};
    }
  }
  return out;
}

namespace {

std::optional<PlanViolation> checkKernelStep(const std::string& where, const KernelStep& k, const PlanBuffers& buffers) {
  const auto widen = [](const std::array<std::uint32_t, 3>& a) { return std::array<std::int64_t, 3>{a[0], a[1], a[2]}; };
  if (auto v = checkLaunchConfiguration(where, widen(k.grid), widen(k.block), k.sharedBytes)) return v;
  for (const auto& a : k.args) {
    if (a.kind == PlanArg::Kind::scalar && (a.bytes.empty() || a.bytes.size() > LaunchLimits::maxScalarBytes)) {
      return violation(PlanViolation::Kind::malformed, fmt::format("{}: a scalar argument of {} bytes", where, a.bytes.size()));
    }
    if (a.kind != PlanArg::Kind::buffer) continue;
    const PlanBuffer* b = find(buffers, a.buffer);
    if (!b) return violation(PlanViolation::Kind::malformed, fmt::format("{}: an argument names an unknown buffer '{}'", where, a.buffer));
    if (a.byteOffset < 0 || a.byteOffset > b->bytes()) {
      return violation(PlanViolation::Kind::pointerOutOfBounds,
                       fmt::format("{}: a pointer {} bytes into '{}', which has {}", where, a.byteOffset, a.buffer, b->bytes()));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<PlanViolation> validatePlan(const LaunchPlan& plan, PlanBuffers buffers) {
  for (const auto& s : plan.scratch) {
    const auto count = elementCount(s.shape);
    const bool empty = std::ranges::any_of(s.shape, [](std::int64_t d) { return d < 1; });
    // An element count that overflows is absurd, which checkBufferSize says.
    const std::int64_t numel = empty ? 0 : count ? *count : std::numeric_limits<std::int64_t>::max();
    if (auto v = checkBufferSize(s.name, s.dtype, numel)) return v;
    buffers[s.name] = {s.dtype, numel};
  }
  std::size_t index = 0;
  for (const auto& step : plan.steps) {
    const std::string where = step.kind == PlanStep::Kind::kernel ? fmt::format("launch {} ({})", index, step.kernel.kernel)
                                                                  : fmt::format("step {} ({})", index, step.library.op());
    ++index;
    if (step.kind == PlanStep::Kind::library) {
      std::optional<PlanViolation> v;
      step.library.forEachView([&](const TensorView& view) {
        if (!v) v = checkView(view, buffers);
      });
      if (v) return PlanViolation{v->kind, where + ": " + v->message};
      continue;
    }
    if (auto v = checkKernelStep(where, step.kernel, buffers)) return v;
    if (!step.kernel.autotune) continue;
    const AutotunedLaunch& tuning = *step.kernel.autotune;
    if (tuning.alternatives.empty() || tuning.alternatives.size() != tuning.configs.size() ||
        tuning.alternatives.size() > AutotunedLaunch::maxConfigurations) {
      return violation(PlanViolation::Kind::malformed,
                       fmt::format("{}: {} autotuned configurations for {} launches (at most {})", where, tuning.configs.size(),
                                   tuning.alternatives.size(), AutotunedLaunch::maxConfigurations));
    }
    for (std::size_t i = 0; i < tuning.alternatives.size(); ++i) {
      const KernelStep& a = tuning.alternatives[i];
      if (a.autotune) return violation(PlanViolation::Kind::malformed, fmt::format("{}: an autotuned configuration is autotuned itself", where));
      if (auto v = checkKernelStep(fmt::format("{}, configuration {} ({})", where, i + 1, a.kernel), a, buffers)) return v;
    }
  }
  return std::nullopt;
}

}  // namespace cuset
