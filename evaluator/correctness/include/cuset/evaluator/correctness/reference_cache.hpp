#pragma once
// The LibTorch references of a run, compiled once per problem and shared by the evaluation threads of
// every backend. LibTorch itself stays behind TorchReference (problem/torch_reference.hpp).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"

namespace cuset {

// A problem's reference could not compile or run (it raised, returned the wrong shape): nothing can be
// judged against it, which is no candidate's fault.
struct ReferenceFailure : Error {
  using Error::Error;
};

// Compiled TorchScript references, one per problem, shared by evaluation threads (and by the runs of an
// EvaluationEngine: a problem is known by its folder, id, reference text, tensors and size sets).
class ReferenceCache {
 public:
  // Throws ReferenceFailure (the problem's file and LibTorch's message) when the reference fails; a
  // reference that failed to compile fails again at once.
  // `onGpu`: run references on a CUDA device through LibTorch (the cuda backend's `full` sizes are
  // too large for the CPU); only where TorchReference::cudaAvailable().
  explicit ReferenceCache(bool onGpu = false) : onGpu_(onGpu) {}
  // `numerics`: the reference as a GPU class computes it by default (float32_numerics.hpp); each kind is
  // compiled once per problem.
  // `updated`: the inputs the reference changed in place (TorchReference::run).
  std::vector<HostTensor> run(const Problem& problem, const std::vector<HostTensor>& inputs, const SizeBindings& sizes,
                              Float32Numerics numerics = Float32Numerics::exact, std::vector<UpdatedInput>* updated = nullptr);
  bool onGpu() const { return onGpu_; }

 private:
  bool onGpu_ = false;
  struct Entry {
    std::mutex mutex;
    // The reference's own copy of its problem: a compiled reference reads the problem it was compiled
    // from, and an engine's cache outlives the suite of the run that compiled it.
    std::unique_ptr<const Problem> problem;
    std::unique_ptr<TorchReference> reference;
    std::string compileError;
  };
  std::mutex mutex_;
  std::map<std::pair<std::string, Float32Numerics>, std::unique_ptr<Entry>> entries_;
};

}  // namespace cuset
