#include "cuset/trainer/problem_prompt.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/evaluator/problem/problem.hpp"

namespace cuset {
namespace {

std::string tensorList(const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> parts;
  for (const auto& t : tensors) {
    std::vector<std::string> dims;
    for (const auto& d : t.shape) dims.push_back(d.text());
    parts.push_back(fmt::format("{} ({}, shape [{}])", t.name, dtypeName(t.dtype), fmt::join(dims, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Imported problems are asked KernelBench's way: the Model's Python source is the specification; the
// launch contract then names every input, the lifted parameters and buffers included.
std::string problemStatement(const Problem& p) {
  if (!p.origin || p.origin->source.empty()) return p.description;
  return fmt::format(
      "Implement the forward pass of this PyTorch Model ({} level {} problem {}, `{}`) as CUDA kernels. The module runs in "
      "training mode as constructed (BatchNorm uses batch statistics). Its parameters and buffers are not fixed: they "
      "are inputs of the kernel, named by their PyTorch paths.\n\n```python\n{}```",
      p.origin->suite, p.origin->level, p.origin->number, p.origin->file, p.origin->source);
}

}  // namespace

std::string renderProblemPrompt(const Problem& p) {
  std::vector<std::string> sizes;
  for (const auto& [name, value] : p.sizes("small")) sizes.push_back(fmt::format("{}={}", name, value));
  return fmt::format(
      "Write a CUDA kernel for this problem.\n\n{}\n\nInputs: {}\nOutputs: {}\nSizes (names usable in the manifest), e.g. {}\n"
      "Answer with the kernel and its /*@cuset launch manifest, for example:\n"
      "/*@cuset\nlaunches:\n  - kernel: my_kernel\n    grid: [ceil_div(N, 256)]\n    block: [256]\n    args: [x, y, N]\n*/\n"
      "extern \"C\" __global__ void my_kernel(const float* x, float* y, int N) {{ ... }}",
      problemStatement(p), tensorList(p.inputs), tensorList(p.outputs), fmt::join(sizes, " "));
}

}  // namespace cuset
