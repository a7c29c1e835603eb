#pragma once
// KernelBench as a drop-in (docs/kernelbench.md "Replacing eval_from_generations.py"): the options of
// a run that reads KernelBench's solutions, reproduces its check and writes its result files.
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/evaluator/problem/float32_numerics.hpp"

namespace cuset {

struct KernelBenchRunOptions {
  // auto: KernelBench's own check beside CuSeT's for KernelBench solutions and imported KernelBench
  // problems; always; never.
  std::string check = "auto";
  int checkTrials = 5;  // eval_from_generations.py's num_correct_trials
  // KernelBench's precision option: fp32 runs problems as they are; fp16 / bf16 cast every float32
  // input, weight and output (and set KernelBench's tolerance for it, 1e-2).
  std::string precision = "fp32";
  // The GPU class whose KernelBench verdict is predicted (--kernelbench-gpu: none, ampere, ada, hopper,
  // ...): it decides PyTorch's default numerics there (TF32 convolutions from Ampere on). "auto": the
  // class of the run's target architecture (sm_90: hopper).
  std::string gpu = "auto";
  // KernelBench's float32 tolerance (atol = rtol; half types keep 1e-2): 1e-4 in today's KernelBench,
  // 1e-2 in v0 and v0.1 (--kernelbench-tolerance, or read from --kernelbench's eval.py).
  double float32Tolerance = 1e-4;
  // KernelBench's `backend` option (--backend-lang): the language its solutions are written in, which
  // picks the static checker's implementation rule and the frontend. "auto": Triton where a solution
  // defines a @triton.jit / @triton.autotune kernel, CUDA otherwise; "cuda"; "triton".
  std::string backendLang = "auto";
  std::string staticChecks = "record";  // record: findings only; strict: its strict findings are invalid_submission
  std::filesystem::path baseline;       // KernelBench's baseline timing JSON: fast_p and the geometric-mean speedup
  std::vector<int> passAtK{1};          // pass_at_k_results.json's k values
};

// The GPU class of `options.gpu` for a run whose NVRTC target is `arch`; throws cuset::Error naming the
// option for an unknown class.
GpuClass kernelBenchGpu(const KernelBenchRunOptions& options, const std::string& arch);

}  // namespace cuset
