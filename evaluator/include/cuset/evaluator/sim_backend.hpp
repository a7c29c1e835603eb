#pragma once
// The `sim` backend's correctness stage: trials of fresh inputs, each run in the sandbox on the CPU
// simulator and checked by the supervisor against the LibTorch reference (DESIGN §4 "Correctness").
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuset/evaluator/candidate.hpp"
#include "cuset/evaluator/eval_result.hpp"
#include "cuset/evaluator/launch_manifest.hpp"
#include "cuset/evaluator/problem.hpp"
#include "cuset/evaluator/sandbox.hpp"
#include "cuset/evaluator/sim_compiler.hpp"
#include "cuset/evaluator/torch_reference.hpp"

namespace cuset {

// Compiled TorchScript references, one per problem, shared by evaluation threads.
class ReferenceCache {
 public:
  // `onGpu`: run references on a CUDA device through LibTorch (the cuda backend's `full` sizes are
  // too large for the CPU); only where TorchReference::cudaAvailable().
  explicit ReferenceCache(bool onGpu = false) : onGpu_(onGpu) {}
  std::vector<HostTensor> run(const Problem& problem, const std::vector<HostTensor>& inputs, const SizeBindings& sizes);
  bool onGpu() const { return onGpu_; }

 private:
  bool onGpu_ = false;
  struct Entry {
    std::mutex mutex;
    std::unique_ptr<TorchReference> reference;
  };
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

struct CorrectnessOptions {
  std::uint64_t seed = 0;   // the run's secret seed
  int trials = 5;           // plus one determinism rerun
  std::string sizeSet = "small";
};

// Sets result.verdict (correct, wrong_answer, compile_error, runtime_error, timeout, sandbox_violation,
// hack_suspected or invalid_submission), reason, trials, comparisons and CPU timing.
void runSimBackend(const Problem& problem, const LaunchManifest& manifest, std::string_view source, const SimCompiler& compiler,
                   SandboxPool& sandbox, ReferenceCache& references, const CorrectnessOptions& options, EvalResult& result);

}  // namespace cuset
