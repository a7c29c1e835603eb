#pragma once
// How float32 math is computed by default on the GPU a verdict is predicted for (docs/kernelbench.md
// "Which GPU"): PyTorch lets cuDNN run float32 convolutions on TF32 tensor cores on Ampere and later
// (torch.backends.cudnn.allow_tf32 is true by default; matmul's allow_tf32 is false), so KernelBench's
// reference convolution there is computed from TF32-rounded inputs and weights.
#include <optional>
#include <string_view>

namespace cuset {

enum class Float32Numerics {
  exact,             // IEEE float32 throughout (a CPU, a GPU before Ampere)
  tf32Convolutions,  // convolutions read their input and weight rounded to TF32 (10-bit mantissa)
};

// The GPU classes `--kernelbench-gpu` names, and what PyTorch's defaults compute on each.
enum class GpuClass { none, volta, turing, ampere, ada, hopper, blackwell };
std::string_view gpuClassName(GpuClass gpu);
std::optional<GpuClass> parseGpuClass(std::string_view name);
// The class of an NVRTC target ("sm_90", "compute_86") or a compute capability ("8.9"); none for
// anything older than Volta or unreadable.
GpuClass gpuClassOfArch(std::string_view arch);
Float32Numerics float32NumericsOn(GpuClass gpu);

// Whether `op` ("aten::conv2d", "aten::_convolution") is a convolution cuDNN computes in TF32 there: the
// one list the references' graphs and the plans' library steps both ask.
bool isTf32Convolution(std::string_view op);

// `value` rounded to TF32 as the tensor cores read it: the mantissa to 10 bits, round to nearest with
// ties away from zero (cvt.rna.tf32.f32); NaN and infinities unchanged.
float roundToTf32(float value);

}  // namespace cuset
