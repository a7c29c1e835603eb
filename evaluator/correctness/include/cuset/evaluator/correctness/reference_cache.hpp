#pragma once
// The LibTorch references of a run, compiled once per problem and shared by the evaluation threads of
// every backend. LibTorch itself stays behind TorchReference (problem/torch_reference.hpp).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"

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

}  // namespace cuset
