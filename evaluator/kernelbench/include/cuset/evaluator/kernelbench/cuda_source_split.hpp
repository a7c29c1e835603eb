#pragma once
// A `load_inline` CUDA source holds device code (kernels, __device__ helpers) and host code (functions
// taking torch::Tensor that allocate and launch with <<<...>>>) in one string. The two halves go to
// different places: device code to NVRTC and the simulator's host build, exactly as a `/*@cuset`
// candidate's; host code only to the recorder's build, which runs it on shapes. This splits them
// textually, keeping every line where it was so that compiler messages point at the candidate's lines.
#include <string>
#include <string_view>
#include <vector>

namespace cuset {

struct SplitCudaSource {
  // Host functions, host declarations, torch/ATen/c10/pybind11 and host-library includes blanked out.
  std::string device;
  // Device function bodies replaced by `{}` (host code needs only their signatures), `<<<...>>>`
  // launches rewritten as calls that record them (`::cuset_kb::Launch<&kernel>(grid, block, ...)(args)`).
  std::string host;
  std::vector<std::string> kernels;  // names of the __global__ functions, in source order
  int launches = 0;                  // <<<...>>> rewritten
};

SplitCudaSource splitCudaSource(std::string_view source);

}  // namespace cuset
