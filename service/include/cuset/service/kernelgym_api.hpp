#pragma once
// KernelGYM's request and response shapes (docs/serve.md "KernelGYM's API"), so that a trainer written
// against KernelGYM points at `cuset serve` unchanged: a request is checked field by field (every
// message names the field), and a verdict of this project's evaluator becomes KernelGYM's fields.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cuset/common/expected.hpp"

namespace cuset::service {

struct ServeLimits {
  std::size_t maxCodeBytes = 1 << 20;  // kernel_code and reference_code, each
  int maxTrials = 100;                 // num_correct_trials
  int maxPerfTrials = 10000;           // num_perf_trials
  int maxTimeoutSeconds = 3600;
  std::size_t maxBatchTasks = 100;
};

// A task request with every field present and of its type: task_id, kernel_code, reference_code,
// backend ("cuda" or "triton" as KernelGYM means them: a CUDA or Triton kernel, judged on the server's
// backend; "sim" or "gpu" to choose, for a CUDA kernel), num_correct_trials, num_perf_trials, num_warmup, timeout (seconds), priority
// (low|normal|high), entry_point ("ModelNew"), force_refresh. An unknown field is an error too: a
// misspelt option must not pass silently. `taskIdRequired` false: a missing task_id is drawn.
Expected<nlohmann::json> validateTaskRequest(const nlohmann::json& body, const ServeLimits& limits, bool taskIdRequired = true);

// The response for a finished evaluation from the results.jsonl line of its candidate: task_id,
// status (completed: the judge reached a verdict; failed: it could not), compiled, correctness,
// decoy_kernel (some of the solution's work is library steps, not its own kernels: not pure-kernel), reference_runtime and
// kernel_runtime (ms, GPU timings only), speedup, metadata (verdict, reason, backend, library_ops,
// flags), error_message, error_code.
nlohmann::json responseFromResult(const std::string& taskId, const nlohmann::json& result);

// A response for a task that ended without a verdict (a reference that does not import, a timeout,
// a cancellation, the harness's own failure).
nlohmann::json failureResponse(const std::string& taskId, const std::string& errorCode, const std::string& message);

// KernelGYM's error body: {"detail": message, "error_code": code}.
nlohmann::json errorBody(const std::string& errorCode, const std::string& message);

}  // namespace cuset::service
