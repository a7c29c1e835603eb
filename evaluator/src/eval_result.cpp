#include "cuset/evaluator/eval_result.hpp"

#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/candidate.hpp"

namespace cuset {

std::string EvalResult::key() const { return candidateKey(model, problem, sample); }

nlohmann::json toJson(const EvalResult& r) {
  return {
      {"problem", r.problem},
      {"sample", r.sample},
      {"model", r.model},
      {"verdict", verdictName(r.verdict)},
      {"reason", r.reason},
      {"backend", r.backend},
      {"origin", r.origin},
      {"source_hash", r.sourceHash},
      {"timings_ms", {{"manifest", r.timings.manifestMs}, {"compile", r.timings.compileMs}, {"total", r.timings.totalMs}}},
      {"compile_cache_hit", r.compileCacheHit},
      {"compile_log", r.compileLog},
      {"source", r.source},
  };
}

EvalResult evalResultFromJson(const nlohmann::json& j) {
  try {
    EvalResult r;
    r.problem = j.at("problem").get<std::string>();
    r.sample = j.at("sample").get<std::int64_t>();
    r.model = j.at("model").get<std::string>();
    const std::string verdict = j.at("verdict").get<std::string>();
    const auto v = parseVerdict(verdict);
    if (!v) throw makeError("unknown verdict '{}'", verdict);
    r.verdict = *v;
    r.reason = j.value("reason", "");
    r.backend = j.value("backend", "");
    r.origin = j.value("origin", "");
    r.sourceHash = j.value("source_hash", "");
    r.source = j.value("source", "");
    r.compileLog = j.value("compile_log", "");
    r.compileCacheHit = j.value("compile_cache_hit", false);
    if (auto t = j.find("timings_ms"); t != j.end()) {
      r.timings.manifestMs = t->value("manifest", 0.0);
      r.timings.compileMs = t->value("compile", 0.0);
      r.timings.totalMs = t->value("total", 0.0);
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw makeError("result record: {}", e.what());
  }
}

}  // namespace cuset
