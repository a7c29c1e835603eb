#include "cuset/service/kernelgym_api.hpp"

#include <fmt/format.h>

#include <random>
#include <set>

#include "cuset/service/task_store.hpp"

namespace cuset::service {
namespace {

Unexpected fail(std::string message) { return Unexpected(std::move(message)); }

std::string randomTaskId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("task-{:016x}", rng());
}

// An integer field in [lo, hi] with its default.
Expected<nlohmann::json> integer(const nlohmann::json& body, const char* field, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  if (!body.contains(field)) return nlohmann::json(fallback);
  const auto& v = body.at(field);
  if (!v.is_number_integer()) return fail(fmt::format("'{}' must be an integer, not {}", field, v.type_name()));
  const auto n = v.get<std::int64_t>();
  if (n < lo || n > hi) return fail(fmt::format("'{}' must be in [{}, {}], not {}", field, lo, hi, n));
  return nlohmann::json(n);
}

Expected<nlohmann::json> text(const nlohmann::json& body, const char* field, std::size_t maxBytes, bool required, std::string fallback = {}) {
  if (!body.contains(field)) {
    if (required) return fail(fmt::format("'{}' is required", field));
    return nlohmann::json(fallback);
  }
  const auto& v = body.at(field);
  if (!v.is_string()) return fail(fmt::format("'{}' must be a string, not {}", field, v.type_name()));
  if (v.get_ref<const std::string&>().size() > maxBytes) return fail(fmt::format("'{}' is over the limit of {} bytes", field, maxBytes));
  return v;
}

std::string errorCodeOf(const std::string& verdict) {
  if (verdict == "compile_error") return "COMPILATION_ERROR";
  if (verdict == "runtime_error") return "RUNTIME_ERROR";
  if (verdict == "wrong_answer" || verdict == "hack_suspected") return "CORRECTNESS_ERROR";
  if (verdict == "timeout") return "TIMEOUT_ERROR";
  if (verdict == "invalid_submission") return "VALIDATION_ERROR";
  if (verdict == "sandbox_violation") return "SECURITY_ERROR";
  if (verdict == "unsupported") return "UNSUPPORTED_ERROR";
  return "INTERNAL_ERROR";
}

}  // namespace

Expected<nlohmann::json> validateTaskRequest(const nlohmann::json& body, const ServeLimits& limits, bool taskIdRequired) {
  if (!body.is_object()) return fail(fmt::format("the request body must be a JSON object, not {}", body.type_name()));
  static const std::set<std::string> kFields = {"task_id",    "kernel_code", "reference_code", "backend",     "num_correct_trials", "num_perf_trials",
                                                "num_warmup", "timeout",     "priority",       "entry_point", "force_refresh"};
  for (const auto& [key, v] : body.items()) {
    if (!kFields.contains(key)) return fail(fmt::format("unknown field '{}'", key));
  }
  nlohmann::json out;
  if (body.contains("task_id") || taskIdRequired) {
    auto id = text(body, "task_id", 128, true);
    if (!id) return id;
    if (!validTaskId(id->get<std::string>()))
      return fail("'task_id' must be 1-128 characters of letters, digits, '.', '_' and '-', not starting with '.'");
    out["task_id"] = *id;
  } else {
    out["task_id"] = randomTaskId();
  }
  for (const char* field : {"kernel_code", "reference_code"}) {
    auto v = text(body, field, limits.maxCodeBytes, true);
    if (!v) return v;
    if (v->get_ref<const std::string&>().empty()) return fail(fmt::format("'{}' is empty", field));
    out[field] = *v;
  }
  auto backend = text(body, "backend", 16, false, "cuda");
  if (!backend) return backend;
  if (*backend != "cuda" && *backend != "triton" && *backend != "sim" && *backend != "gpu") {
    return fail(fmt::format("'backend' must be \"cuda\" or \"triton\" (a CUDA or Triton kernel, on the server's backend), \"sim\" or \"gpu\", not {}",
                            backend->dump()));
  }
  out["backend"] = *backend;
  for (const auto& [field, fallback, lo, hi] :
       {std::tuple{"num_correct_trials", 5, 1, limits.maxTrials}, std::tuple{"num_perf_trials", 100, 1, limits.maxPerfTrials},
        std::tuple{"num_warmup", 3, 0, limits.maxPerfTrials}, std::tuple{"timeout", 300, 1, limits.maxTimeoutSeconds}}) {
    auto v = integer(body, field, fallback, lo, hi);
    if (!v) return v;
    out[field] = *v;
  }
  auto priority = text(body, "priority", 16, false, "normal");
  if (!priority) return priority;
  if (!parsePriority(priority->get<std::string>()))
    return fail(fmt::format("'priority' must be \"low\", \"normal\" or \"high\", not {}", priority->dump()));
  out["priority"] = *priority;
  auto entry = text(body, "entry_point", 128, false, "ModelNew");
  if (!entry) return entry;
  if (*entry != "ModelNew") return fail(fmt::format("'entry_point' must be \"ModelNew\" (KernelBench's solution class), not {}", entry->dump()));
  out["entry_point"] = *entry;
  if (body.contains("force_refresh") && !body["force_refresh"].is_boolean())
    return fail(fmt::format("'force_refresh' must be a boolean, not {}", body["force_refresh"].type_name()));
  out["force_refresh"] = body.value("force_refresh", false);
  return out;
}

nlohmann::json responseFromResult(const std::string& taskId, const nlohmann::json& r) {
  const std::string verdict = r.value("verdict", "harness_error");
  const bool harness = verdict == "harness_error";
  const nlohmann::json timing = r.value("timing", nlohmann::json::object());
  const bool gpuTimed = timing.value("kind", std::string()).starts_with("cuda");
  const nlohmann::json libraryOps = r.value("library_ops", nlohmann::json::array());
  const bool compiled = verdict != "compile_error" && verdict != "invalid_submission" && !harness;
  nlohmann::json out = {{"task_id", taskId},
                        {"status", harness ? "failed" : "completed"},
                        {"compiled", compiled},
                        {"correctness", verdict == "correct"},
                        // Some of the answer is PyTorch's (library steps), not the solution's own kernels: not a
                        // pure-kernel solution (docs/kernelbench-solutions.md "Pure-kernel metrics").
                        {"decoy_kernel", !libraryOps.empty()},
                        {"reference_runtime", gpuTimed && timing.contains("reference_median_ms") ? timing["reference_median_ms"] : nlohmann::json()},
                        {"kernel_runtime", gpuTimed && timing.contains("median_ms") ? timing["median_ms"] : nlohmann::json()},
                        {"speedup", timing.contains("speedup") ? timing["speedup"] : nlohmann::json()},
                        {"metadata",
                         {{"verdict", verdict},
                          {"reason", r.value("reason", "")},
                          {"backend", r.value("backend", "")},
                          {"library_ops", libraryOps},
                          {"flags", r.value("flags", nlohmann::json::array())},
                          {"timing_kind", timing.value("kind", std::string())}}},
                        {"error_message", verdict == "correct" ? nlohmann::json() : nlohmann::json(r.value("reason", ""))},
                        {"error_code", verdict == "correct" ? nlohmann::json() : nlohmann::json(errorCodeOf(verdict))}};
  return out;
}

nlohmann::json failureResponse(const std::string& taskId, const std::string& errorCode, const std::string& message) {
  return {{"task_id", taskId},         {"status", "failed"},     {"compiled", false},
          {"correctness", false},      {"decoy_kernel", false},  {"reference_runtime", nullptr},
          {"kernel_runtime", nullptr}, {"speedup", nullptr},     {"metadata", nlohmann::json::object()},
          {"error_message", message},  {"error_code", errorCode}};
}

nlohmann::json errorBody(const std::string& errorCode, const std::string& message) { return {{"detail", message}, {"error_code", errorCode}}; }

}  // namespace cuset::service
