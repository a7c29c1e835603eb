#pragma once
// The launch manifest a candidate carries in its leading `/*@cuset ... */` comment (DESIGN §3): which
// kernels to launch, in which order, with which geometry and arguments, and which scratch buffers.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/problem/int_expr.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/candidate/plan_validator.hpp"

namespace cuset {

struct LaunchArg {
  enum class Kind { buffer, scalar };
  enum class ScalarType { int32, int64 };
  Kind kind = Kind::buffer;
  std::string buffer;                    // input, output or workspace name (device pointer)
  IntExpr value = IntExpr::constant(0);  // scalar: expression over size names
  ScalarType type = ScalarType::int32;
};

struct KernelLaunch {
  std::string kernel;          // name as written: an extern "C" symbol or a C++ name expression (foo<float>)
  std::vector<IntExpr> grid;   // 1-3 dimensions
  std::vector<IntExpr> block;  // 1-3 dimensions
  IntExpr sharedBytes = IntExpr::constant(0);
  std::vector<LaunchArg> args;
};

struct LaunchManifest {
  std::vector<KernelLaunch> launches;
  std::vector<TensorSpec> workspace;  // zero-filled scratch buffers
  int firstLine = 0;                  // 1-based line of the /*@cuset marker in the source

  // Distinct kernel names in launch order.
  std::vector<std::string> kernelNames() const;
};

// Finds and parses the manifest of `source` and checks it against `problem`: buffer names exist, size
// expressions refer to size names, every output is passed to some launch, and every size set of the
// problem gives valid launch geometry. The error explains what is wrong and where (manifest line).
Expected<LaunchManifest> parseLaunchManifest(std::string_view source, const Problem& problem);

struct ResolvedArg {
  LaunchArg::Kind kind = LaunchArg::Kind::buffer;
  std::string buffer;
  std::int64_t value = 0;
  LaunchArg::ScalarType type = LaunchArg::ScalarType::int32;
};

struct ResolvedLaunch {
  std::string kernel;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t sharedBytes = 0;
  std::vector<ResolvedArg> args;
};

// Evaluates every expression for concrete sizes and checks the launch limits.
Expected<std::vector<ResolvedLaunch>> resolveLaunches(const LaunchManifest& manifest, const SizeBindings& sizes);

}  // namespace cuset
