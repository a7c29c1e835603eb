#pragma once
// The launch plan (DESIGN §3): what every backend executes, whichever form the candidate had. Per size
// set, the scratch buffers beside the problem's inputs and outputs, and the ordered steps: kernel
// launches and library steps (a LibTorch op on buffers, run by the harness on the backend's device).
// A `/*@cuset` manifest becomes one (planFromManifest); a KernelBench solution is recorded into one
// (evaluator/kernelbench/).
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"
#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/candidate/library_step.hpp"

namespace cuset {

struct PlanArg {
  enum class Kind { buffer, null, scalar };
  Kind kind = Kind::scalar;
  std::string buffer;               // buffer: input, output or scratch name
  std::int64_t byteOffset = 0;      // buffer: where the pointer points, from the buffer's start
  std::vector<std::uint8_t> bytes;  // scalar: the value as the kernel receives it
  // scalar: "int32", "int64", "uint32", "uint64", "float32", "float64", or "bytes<N>" for any other
  // trivially copyable value; the backends check it against the kernel's parameter.
  std::string type;

  static PlanArg pointer(std::string buffer, std::int64_t byteOffset = 0);
  static PlanArg int32(std::int32_t v);
  static PlanArg int64(std::int64_t v);
  static PlanArg float32(float v);
  static PlanArg float64(double v);
  bool floating() const { return type.starts_with("float"); }
  bool integral() const { return type.starts_with("int") || type.starts_with("uint"); }
  std::string describe() const;  // "x+16", "int32 4096", "float32 0.5"
};

struct AutotunedLaunch;

struct KernelStep {
  std::string kernel;  // an extern "C" symbol or a C++ name expression (k<float>)
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t sharedBytes = 0;
  std::vector<PlanArg> args;
  std::shared_ptr<const AutotunedLaunch> autotune;  // null: the launch has one configuration
};

// A Triton launch under `triton.autotune`, recorded for a GPU: the launch each kept configuration makes
// (this step's own first, the one the CPU runs). The GPU worker times them before the trials as Triton's
// autotuner does, and the fastest is the step from then on (LaunchPlan::tuned).
struct AutotunedLaunch {
  static constexpr std::size_t maxConfigurations = 64;  // each costs ~0.13 s of GPU time to time
  std::string key;                                      // Triton's tuning key: launches that share it share one choice
  std::vector<std::string> configs;                     // as Triton prints each configuration
  std::vector<KernelStep> alternatives;                 // one per configuration
};

struct PlanStep {
  enum class Kind { kernel, library };
  Kind kind = Kind::kernel;
  KernelStep kernel;
  LibraryStep library;
};

struct ScratchBuffer {
  std::string name;
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  bool zeroed = true;  // false: poisoned like an output (torch::empty); true: zero-filled (workspace, torch::zeros)
};

struct LaunchPlan {
  std::vector<ScratchBuffer> scratch;
  std::vector<PlanStep> steps;
  std::vector<std::string> zeroedOutputs;  // outputs the candidate itself allocated with zeros

  std::vector<std::string> kernelNames() const;  // distinct, in launch order
  std::vector<std::string> libraryOps() const;   // distinct, in order ("aten::convolution"), the harness's own steps left out
  bool usesLibrary() const;
  std::vector<KernelStep> kernelSteps() const;  // the kernel steps alone, in order
  nlohmann::json toJson() const;                // for `cuset translate` and results
  bool autotuned() const;                       // whether a step has configurations for the GPU to choose from
  // The plan with each autotuned step replaced by the configuration chosen for its key (an index into
  // its alternatives); a key not in `chosen` keeps the first.
  LaunchPlan tuned(const std::map<std::string, std::size_t>& chosen) const;
};

// A candidate as the backends see it: its device code and a launch plan per size set of its problem,
// whichever form it came in.
struct CandidatePlan {
  std::string deviceSource;                 // what NVRTC and the simulator compile
  std::vector<std::string> kernelNames;     // every kernel any plan launches
  std::map<std::string, LaunchPlan> plans;  // size set -> plan
  // Empty: compiled for the run's architecture. Else the architecture-specific target the device code
  // needs (Triton's Hopper code uses wgmma: sm_90a), which the run's GPU must be.
  std::string deviceArch;
  std::vector<std::string> libraryOps() const;  // over every size set
};

// One of a candidate's parameters that its own construction starts from other values than the
// reference's weight it stands for (a ModelNew built as KernelBench builds it: seed 42, Model, seed 42,
// ModelNew, no weights copied). CuSeT's trials bind both to the same weights; a judge that builds each
// as it is sees other outputs. A finding, never CuSeT's verdict.
struct ConstructionDifference {
  std::string parameter;  // the candidate's name for it
  std::string weight;     // the reference's weight it is bound to
  std::string how;        // "the same values in another order", "0 everywhere, where Model's lie in ..."
};

// A manifest's launches for concrete sizes, with its workspace as zeroed scratch; checks the launch
// limits as resolveLaunches did.
Expected<LaunchPlan> planFromManifest(const LaunchManifest& manifest, const SizeBindings& sizes);

}  // namespace cuset
