#pragma once
// One candidate's way through the evaluator: its form's frontend -> launch plans -> NVRTC -> (backend)
// -> its result. The run around it is evaluator/evaluation/'s (evaluation.hpp).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/pipeline/candidate_frontend.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/cuda/cuda_backend.hpp"
#include "cuset/evaluator/pipeline/remote_judge.hpp"
#include "cuset/evaluator/pipeline/shard_plan.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/results/eval_result.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"
#include "cuset/evaluator/sim_backend/sim_backend.hpp"
#include "cuset/evaluator/problem/float32_numerics.hpp"

namespace cuset {

// `automatic` ("auto") is resolved when a run starts: cuda when a GPU and driver are usable, else sim.
enum class BackendKind { compileOnly, sim, cuda, automatic };
std::string_view backendName(BackendKind kind);
std::optional<BackendKind> parseBackend(std::string_view name);
// The NVRTC target for a device of compute capability "9.0": its own sm_XY cubin when NVRTC knows
// it, else PTX (compute_XY) of the newest architecture NVRTC supports, for the driver to JIT.
std::string archForDevice(const std::string& computeCapability);
// The number of an NVRTC target ("sm_90" and "compute_90a": 90); 0 for anything else.
int archNumber(std::string_view arch);
// The architecture-specific target of a plain one ("sm_90": "sm_90a"), for architectures that have one
// (9.0 and newer); empty otherwise, or where `arch` already is one.
std::string archSpecificTarget(const std::string& arch);

// What evaluating a candidate needs besides the candidate. The sim members are null for compile-only.
struct EvalServices {
  const ProblemSuite& suite;
  const NvrtcCompiler& nvrtc;
  // The same for the run architecture's architecture-specific target (sm_90a on a Hopper GPU), for plans
  // whose device code needs it (CandidatePlan::deviceArch); null where the run has none.
  const NvrtcCompiler* nvrtcArchSpecific = nullptr;
  BackendKind backend = BackendKind::compileOnly;
  const SimCompiler* simCompiler = nullptr;
  SandboxPool* sandbox = nullptr;
  ReferenceCache* references = nullptr;
  CorrectnessOptions correctness;
  CudaDevices* cuda = nullptr;  // cuda backend only
  // Problems this run cannot judge, with the reason their candidates' `unsupported` verdict gives: the
  // reference failed the check at the start, or the problem has no size set the backend runs.
  const std::map<std::string, std::string>* unjudgeable = nullptr;
  // The candidate forms the run reads, asked in order (candidate_frontend.hpp), and the second opinion
  // it reproduces (null: none).
  std::vector<const CandidateFrontend*> frontends;
  const SecondOpinionSource* secondOpinions = nullptr;
  const RemoteJudge* remote = nullptr;  // set: every candidate goes to it
};

// The per-candidate stages. Never throws for a bad candidate: every problem with the candidate becomes
// its verdict and reason.
EvalResult evaluateCandidate(const Candidate& candidate, const EvalServices& services);

}  // namespace cuset
