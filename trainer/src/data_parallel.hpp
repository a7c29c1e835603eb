#pragma once
// Data parallelism over LibTorch's c10d: one process per rank, a TCPStore at MASTER_ADDR:MASTER_PORT
// for the rendezvous, ProcessGroupGloo for the collectives (tensors on CPU or CUDA). Private to
// training.cpp (it brings LibTorch's types). With a world of one every operation is the identity and
// nothing is connected, so the single-process path runs the same code.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cuset/trainer/distributed_env.hpp"

namespace cuset {

class DataParallel {
 public:
  // Meets the other ranks (waits up to env.timeout for all of them) when env.active().
  explicit DataParallel(const DistributedEnv& env);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  const DistributedEnv& env() const { return env_; }
  bool active() const { return env_.active(); }

  // Rank `root`'s values into every rank's tensors, in place.
  void broadcast(const std::vector<at::Tensor>& tensors, std::string_view what, int root = 0);
  // Every parameter's gradient becomes the sum over ranks. Gradients are flattened into buckets of
  // about `bucketBytes` whose all-reduces run concurrently; a missing gradient counts as zeros.
  void sumGradients(const std::vector<at::Tensor>& parameters, std::string_view what);
  // Element-wise sums over ranks.
  std::vector<double> sum(std::vector<double> values, std::string_view what);
  // The smallest and largest of `value()` over ranks, for checks that the ranks agree. In a world of
  // one there is nothing to compare: `value` is not called (it may be a pass over the whole model or
  // data set) and the result is {0, 0}.
  std::pair<double, double> minMax(const std::function<double()>& value, std::string_view what);
  // The ranks' (b, T) tensors stacked into (world * b, max T), rank 0's rows first, each row padded
  // on the right with zeros. Every rank must pass the same b, dtype and device.
  at::Tensor gatherRows(const at::Tensor& local, std::string_view what);

  // Seconds sumGradients spent moving gradients, and waiting for the slowest rank to arrive, since the
  // last call.
  double takeGradientSeconds();
  double takeWaitSeconds();

  static constexpr std::int64_t bucketBytes = 25 << 20;  // DDP's default bucket size

 private:
  struct Group;
  DistributedEnv env_;
  std::unique_ptr<Group> group_;
  double gradientSeconds_ = 0.0;
  double waitSeconds_ = 0.0;
};

}  // namespace cuset
