#pragma once
// KernelBench's static checker (its kernel_static_checker.validate_kernel_static with the CUDA or
// Triton backend's presets), reproduced so a run records what KernelBench would flag in a solution: its strict
// checks reject the submission there, its warnings do not. Patterns over the source with `#` and `//`
// comments cut off each line, as KernelBench reads it: a textual screen, not an analysis; CuSeT's own
// defences (sandbox, trials) do not depend on it.
#include <string>
#include <string_view>
#include <vector>

namespace cuset {

struct KernelBenchStaticFinding {
  std::string check;    // KernelBench's check name: "code_bypass", "stream_injection", ...
  std::string message;  // KernelBench's wording of what it found
  bool strict = false;  // one of its STRICT_CHECKS (or the backend's implementation check)
};

// `precision` is "fp32", "fp16" or "bf16": the precision downgrade check applies to fp32 only.
// `backend` is KernelBench's option of that name, the language the solution is written in: "cuda"
// (cuda_impl) or "triton" (triton_impl), whose implementation check is strict.
std::vector<KernelBenchStaticFinding> kernelBenchStaticFindings(std::string_view source, std::string_view precision,
                                                                std::string_view backend = "cuda");

// Whether `source` defines a Triton kernel as KernelBench's Triton check reads it: a @triton.jit or
// @triton.autotune decorator outside comments.
bool hasTritonKernel(std::string_view source);

}  // namespace cuset
