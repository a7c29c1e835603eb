#pragma once
// The LibTorch side of the evaluator, behind a pimpl: this header includes no LibTorch header, so only
// torch_reference.cpp pays LibTorch's compile time (DEVELOPERS.md: keep <torch/torch.h> contained).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/float32_numerics.hpp"
#include "cuset/evaluator/problem/host_tensor.hpp"
#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {

// An input the reference wrote in place, and what it left there.
struct UpdatedInput {
  std::size_t input = 0;  // index in the problem's inputs
  HostTensor value;
};

// A problem's TorchScript `forward`, compiled with torch::jit::compile (no Python anywhere). Its
// parameters are bound by name: a tensor parameter to the input of that name, an int parameter to the
// size of that name.
class TorchReference {
 public:
  // Throws cuset::Error naming the problem's file on a TorchScript error or a parameter that names
  // neither an input nor a size.
  // `numerics`: tf32Convolutions computes every convolution of the reference (aten::conv*d,
  // aten::_convolution, transposed ones) from TF32-rounded inputs and weights, as PyTorch's cuDNN does by
  // default on Ampere and later (the op `cuset::round_tf32` is inserted before them in the TorchScript graphs).
  static TorchReference compile(const Problem& problem, Float32Numerics numerics = Float32Numerics::exact);

  TorchReference(TorchReference&&) noexcept;
  TorchReference& operator=(TorchReference&&) noexcept;
  ~TorchReference();

  // Runs forward on `inputs` (problem order). Floating inputs are upcast to float32 (float64 if the
  // problem asks); outputs are checked against the declared count, shapes and dtype kinds, then rounded
  // to the declared dtypes. Throws cuset::Error on any mismatch. `onGpu` computes on a CUDA device
  // (same precision rules) and copies the outputs back.
  // `updated`, when given, receives every input the reference changed in place, with its new value (a
  // module in training mode: BatchNorm's running_mean, running_var, num_batches_tracked), in input order.
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs, const SizeBindings& sizes, bool onGpu = false,
                              std::vector<UpdatedInput>* updated = nullptr) const;

  // Whether this LibTorch can run on a CUDA GPU (a CUDA build and a visible device).
  static bool cudaAvailable();
  // The speedup baseline (DESIGN §4): forward on the GPU with the inputs in their declared dtypes, on
  // LibTorch's current stream. `step(run)` is called until it returns false; it wraps one iteration
  // (to time it) and calls run(), which only enqueues the work. Throws cuset::Error without CUDA.
  void runOnGpu(const std::vector<HostTensor>& inputs, const SizeBindings& sizes,
                const std::function<bool(const std::function<void()>&)>& step) const;

  // Opaque outside torch_reference.cpp.
  struct Impl;

 private:
  explicit TorchReference(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::string libtorchVersion();
// Whether this LibTorch was built with CUDA (a pip torch's is, and runs on a CPU-only machine too), and
// how many GPUs it sees (0 without a driver or a device).
bool libtorchHasCuda();
int libtorchCudaDevices();

// The inputs of `problem` for a size set and trial, in problem order: generateInputs, then the
// problem's input transform (a TorchScript archive) where it has one. Every caller that judges or
// times a candidate draws its inputs here.
std::vector<HostTensor> drawInputs(const Problem& problem, const SizeBindings& sizes, std::uint64_t runSeed, std::uint64_t trial,
                                   bool alternate = false);

}  // namespace cuset
