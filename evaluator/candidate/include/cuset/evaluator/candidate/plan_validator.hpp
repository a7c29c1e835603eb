#pragma once
// Every limit a launch plan must respect before a backend runs it, whichever producer made it (a
// `/*@cuset` manifest, a KernelBench recording, anything later): launch geometry and shared memory, the
// number of launches, which buffers a step may name, where its pointers and views may reach, and how
// large a buffer may be. Each limit and its message live here once. What breaking one *is* belongs to
// the producer: a manifest that asks for it is an invalid submission; a recording that did it is what
// the GPU would have done with the launch (a runtime error).
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cuset/evaluator/candidate/library_step.hpp"
#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

struct LaunchPlan;

// Launch limits on every GPU CuSeT targets (compute capability 7.5+).
struct LaunchLimits {
  static constexpr std::int64_t maxThreadsPerBlock = 1024;
  static constexpr std::array<std::int64_t, 3> maxBlock{1024, 1024, 64};
  static constexpr std::array<std::int64_t, 3> maxGrid{2147483647, 65535, 65535};
  static constexpr std::int64_t maxSharedBytes = 227 * 1024;  // opt-in maximum on sm_90
  // A cubin's static shared section also holds the 1 KiB that sm_80+ reserves per block.
  static constexpr std::int64_t reservedSharedBytes = 1024;
  // A manifest names its launches one by one; more than this is not a kernel, it is a loop unrolled by hand.
  static constexpr std::size_t maxManifestLaunches = 64;
  // A scalar argument is at most this many bytes (a struct passed by value).
  static constexpr std::size_t maxScalarBytes = 64;
};

struct PlanViolation {
  enum class Kind {
    launchConfiguration,  // grid, block, threads or shared memory: the driver's "invalid configuration argument"
    pointerOutOfBounds,   // a kernel's pointer starts past the end of its buffer
    malformed,            // an unknown buffer, a view outside its buffer, a scalar of no size, a buffer of no elements
  };
  Kind kind = Kind::malformed;
  std::string message;
};

// A buffer a plan may name (the problem's inputs and outputs, the plan's scratch).
struct PlanBuffer {
  DType dtype = DType::float32;
  std::int64_t numel = 0;
  std::int64_t bytes() const { return numel * static_cast<std::int64_t>(dtypeSize(dtype)); }
};
using PlanBuffers = std::map<std::string, PlanBuffer>;

// Geometry as the producer read it (before it is narrowed into a KernelStep): every axis in range,
// threads per block, dynamic shared memory. `where` names the launch ("launch 0 (k)").
std::optional<PlanViolation> checkLaunchConfiguration(std::string_view where, const std::array<std::int64_t, 3>& grid,
                                                      const std::array<std::int64_t, 3>& block, std::int64_t sharedBytes);

// A buffer of `numel` elements: at least one, at most kMaxTensorBytes.
std::optional<PlanViolation> checkBufferSize(std::string_view name, DType dtype, std::int64_t numel);

// A view inside a buffer of `buffers`, of its dtype; the JSON form ({"buffer", "offset" (elements),
// "sizes", "strides", "dtype"}) is read first, and a view that is not one is malformed.
std::optional<PlanViolation> checkView(const TensorView& view, const PlanBuffers& buffers);
std::optional<PlanViolation> checkView(const nlohmann::json& view, const PlanBuffers& buffers);

// The problem's inputs and outputs for one size set.
PlanBuffers problemBuffers(const Problem& problem, const SizeBindings& sizes);

// The finished plan: every kernel step's geometry, buffer arguments (named, pointing inside) and
// scalars, every library step's views, every scratch buffer's size. `buffers` holds the problem's
// inputs and outputs; the plan's scratch is added here.
std::optional<PlanViolation> validatePlan(const LaunchPlan& plan, PlanBuffers buffers);

}  // namespace cuset
