#pragma once
// `cuset __cuda-worker`: the process that owns the GPU for the cuda backend. It holds the primary
// context, loads NVRTC images, runs each trial's launches on one device region laid out exactly like
// the simulator's (inputs, outputs with canaries, workspace, guard bands), and times the candidate.
// The supervisor never trusts it with a verdict: it returns the region and the samples, and the
// supervisor checks them. A sticky CUDA error (illegal address, trap) is reported with
// "worker_exits": true and the worker exits, since its context is unusable; the supervisor starts a
// new one for the next request.
//
// Requests (sandbox::Message frames; payloads in the shared payload file when `payloadFd` is given):
//   {"op": "hello"}                         -> {"status": "ok", "device": {...}} | {"status": "unavailable", "message"}
//   {"op": "load", "is_cubin": bool}, payload = image
//                                           -> {"status": "ok", "module": key} (kept for the worker's life)
//   {"op": "run", "module": key, "symbols": {kernel: symbol}, "launches": [...],
//    "timing": {"enabled": bool, "timer": "cupti"|"events", "min_samples", "max_rel_stddev",
//               "min_seconds", "max_seconds", "l2_flush_bytes"}}
//    payload = region                     -> {"status", "message", "kernel_ms", "timing": {...}}, payload = region
#include <optional>

namespace cuset {

// `device`: the ordinal among the supervisor's visible devices this worker uses (default: the first).
int runCudaWorker(std::optional<int> payloadFd, std::optional<int> device = std::nullopt);

}  // namespace cuset
