#pragma once
// KernelBench's candidate form (DESIGN §3, docs/kernelbench.md): a Python file defining ModelNew,
// whose CUDA source strings `load_inline` compiles, becomes a launch plan. The solution's Python and
// host C++ run only in a restricted helper process (no network, no new processes, no writes; a time
// and a memory limit) and only on shapes: its host code is built against a shape-only stand-in for
// the torch extension API, and forward runs on tensors without data, so every launch and torch op is
// recorded. What the recording cannot express is `unsupported`; what KernelBench would reject gets
// KernelBench's verdict. The kernels' device code then goes through NVRTC and the simulator like any
// candidate's.
#include <chrono>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/kernelbench/recorded_plan.hpp"

namespace cuset {

// Whether `source` is a KernelBench solution (Python defining ModelNew) rather than CUDA C++.
bool isKernelBenchSolution(std::string_view source);

struct Translation {
  // Empty: a plan. Else the verdict the solution gets without running.
  std::optional<Verdict> verdict;
  std::string reason;
  std::string log;  // the host build's compiler output, or the helper's own output
  CandidatePlan plan;
  nlohmann::json recorded;  // the recorder's plans, per size set, as it wrote them (for `cuset translate --json`)
  double milliseconds = 0.0;
  bool cacheHit = false;
  int warmRuns = 0;  // recorder runs served by the warm recorder (the others started their own process)
  // The recorder was stopped from outside (out of time, killed by a signal the solution does not cause by
  // itself): the verdict stands for this run, but is not cached as the solution's.
  bool interrupted = false;
  // With a plan: the verdict it gets whatever its trials show (a library step writes an input:
  // hack_suspected). The plan still runs, for KernelBench's check, which does not look.
  std::optional<PlanRefusal> standing;
  // Findings, not verdicts: CuSeT's trials bind both to the problem's weights; KernelBench's check fails.
  std::vector<ConstructionDifference> construction;
  bool ok() const { return !verdict; }
};

class NvrtcCompiler;

struct TranslatorOptions {
  std::filesystem::path cacheDir;             // empty: no cache
  std::chrono::milliseconds timeout{120000};  // per helper run and per host build
  std::string python;                         // empty: pythonWithTorch() ($CUSET_PYTHON, else the build's)
  std::size_t memoryBytes = std::size_t{8} << 30;
  // The size sets to record (the ones the backend runs); empty: every size set of the problem.
  std::vector<std::string> sizeSets;
  // Size sets recorded only to check the plan there, never run (the simulator checks KernelBench's own
  // `full` sizes: grid and block limits, shared memory, byte extents of every access). A plan invalid
  // there gets that verdict; one the recording cannot express there is left out. No memory budget.
  std::vector<std::string> checkedSizeSets;
  MemoryBudget budget;  // of the device that runs the plans
  // Keep the recorder warm: one restricted Python process with torch imported, forking a sandboxed
  // child per run (warm_recorder.hpp). CUSET_KB_WARM=0 in the environment turns it off.
  bool warm = true;
  // The compiler that will build the plan's device code: each extension's device half is compiled
  // with it at translation, as load_inline's nvcc builds it, so that a device build failure (a syntax
  // error, ptxas' "too much shared data") is the extension's build failure, which the solution may
  // catch and fall back from as under KernelBench. Null: not checked here (the evaluation's compile
  // still fails such a plan).
  const NvrtcCompiler* deviceCompiler = nullptr;
  // 0: Triton kernels are compiled for the simulator (sm_80). Else for a GPU of this compute capability
  // (90: Hopper), as Triton compiles them there; the plan then names the NVRTC target that code needs.
  int tritonCapability = 0;
};

namespace detail {
class WarmRecorderPool;
class HostBuildCache;
}  // namespace detail

// What a translation came to, for a person: the verdict and reason, or per size set the scratch
// buffers, the kernel launches with their geometry and arguments, and the library steps.
std::string describeTranslation(const Translation& t);

class KernelBenchTranslator {
 public:
  explicit KernelBenchTranslator(TranslatorOptions options);

  // Thread-safe. Throws cuset::Error only for a harness failure (no Python with torch, a full disk).
  Translation translate(const Problem& problem, std::string_view solution) const;

  const TranslatorOptions& options() const { return options_; }

 private:
  TranslatorOptions options_;
  std::string digest_;                                  // of the recorder, the torch stand-in and its library: part of every cache key
  std::filesystem::path workRoot_;                      // where translations make their folders
  std::shared_ptr<ScratchDir> ownRoot_;                 // that folder, when there is no cache folder
  std::shared_ptr<detail::WarmRecorderPool> warm_;      // null: every recorder run is its own process
  std::shared_ptr<detail::HostBuildCache> hostBuilds_;  // by content, and the stand-in's precompiled header
};

}  // namespace cuset
