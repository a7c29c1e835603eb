#pragma once
// The `sim` backend's correctness stage: trials of fresh inputs, each run in the sandbox on the CPU
// simulator and checked by the supervisor against the LibTorch reference (DESIGN §4 "Correctness").
#include <string>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/correctness/correctness_trials.hpp"
#include "cuset/evaluator/correctness/reference_cache.hpp"
#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/results/eval_result.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"

namespace cuset {

// What the simulator's race check says when it finds one (the runtime's shared_accesses.cpp words it):
// a `runtime_error` reason that holds it is a race between threads of a block, named.
inline constexpr std::string_view kSharedMemoryRace = "a race in shared memory";
bool namesSharedMemoryRace(std::string_view reason);
// The same between threads of a block or of two blocks in the trial's buffers (global_accesses.cpp).
inline constexpr std::string_view kGlobalMemoryRace = "a race in global memory";

// Runs `plan` (the launch plan for options.sizeSet) of the device code `source`. Kernel steps run in
// the sandbox; library steps run here, between them, on the same region. Sets result.verdict (correct,
// wrong_answer, compile_error, runtime_error, timeout, sandbox_violation, hack_suspected or
// invalid_submission), reason, trials, comparisons and CPU timing.
void runSimBackend(const Problem& problem, const LaunchPlan& plan, std::string_view source, const SimCompiler& compiler, SandboxPool& sandbox,
                   ReferenceCache& references, const CorrectnessOptions& options, EvalResult& result);

}  // namespace cuset
