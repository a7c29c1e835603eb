#pragma once
// Every process CuSeT starts besides itself, in one place: its name, who starts it, what it may do, and
// what it speaks. The hidden subcommands (`cuset __worker`, ...) are dispatched by these names in
// cli/main.cpp and started by them (WorkerProcess) from their stages; the Python helpers are started
// by path (resources.hpp). docs/ARCHITECTURE.md "Processes" draws the same table.
#include <array>
#include <string_view>

namespace cuset {

struct ProcessRole {
  std::string_view name;          // the hidden subcommand, or the helper's script
  std::string_view startedBy;     // the stage (and file) that starts it
  std::string_view restrictions;  // what confines it
  std::string_view speaks;        // its protocol
};

// Runs candidate code compiled for the simulator: one per sim job slot, forking a child per trial.
inline constexpr ProcessRole kSimWorkerRole{
    "__worker", "sandbox (sandbox_client.cpp, for sim_backend)",
    "a forked child per trial: seccomp allow-list, Landlock (read-only), rlimits (memory, CPU, files, no core), a private scratch "
    "folder, buffer fences; the worker itself holds no candidate code",
    "sandbox::Message frames on its pipes (sandbox_protocol.hpp), payloads in a shared memfd (shared_payload.hpp)"};
// Runs NVRTC on a candidate's device code under a time limit (a compile that never ends is the candidate's).
inline constexpr ProcessRole kNvrtcWorkerRole{"__nvrtc-worker", "compile (nvrtc_isolation.cpp)",
                                              "rlimits (no files written, no core, 8 GiB of address space); minimal environment",
                                              "sandbox::Message frames: source and options in, PTX or cubin and log out"};
// Owns one GPU: loads modules, launches plans, times them (CUPTI, events).
inline constexpr ProcessRole kCudaWorkerRole{
    "__cuda-worker", "cuda (cuda_backend.cpp), one per device",
    "its own process and context (a sticky CUDA error or a hang kills only it); the kernels are the candidate's, compiled by NVRTC",
    "sandbox::Message frames: hello, load, run (regions in a shared memfd)"};
// Checks that a problem's reference compiles and runs (LibTorch), off the supervisor's process.
inline constexpr ProcessRole kReferenceWorkerRole{"__reference-worker", "pipeline (reference_check.cpp)",
                                                  "its own process under a time limit (a reference that hangs or crashes fails its problem only)",
                                                  "sandbox::Message frames: the problem file in, the check's outcome out"};
// Records a KernelBench solution's Python and host code into launch plans: a warm fork server whose
// children restrict themselves before the solution runs, or one process per run.
inline constexpr ProcessRole kRecorderRole{
    "cuset_kernelbench.py capture|record|serve", "translate (kernelbench_translator.cpp, warm_recorder.cpp)",
    "runRestricted: rlimits, Landlock from a parent-made ruleset, no network, a private scratch folder; each child also loads "
    "libcuset_restrict.so and installs its seccomp filter (cuset_restrict_syscalls) before the solution's code, and audit hooks name what it tried",
    "a JSON result on fd 3; the server: one JSON request per line, one result per child"};
// Traces a KernelBench problem file into a problem suite (cuset import kernelbench).
inline constexpr ProcessRole kTracerRole{"cuset_kernelbench.py trace", "importer (kernelbench_import.cpp)",
                                         "a child process per file under a time limit; the files are the user's own KernelBench checkout",
                                         "command-line arguments in, problem folders and a JSON report out"};

inline constexpr std::array kProcessRoles{kSimWorkerRole, kNvrtcWorkerRole, kCudaWorkerRole, kReferenceWorkerRole, kRecorderRole, kTracerRole};

}  // namespace cuset
