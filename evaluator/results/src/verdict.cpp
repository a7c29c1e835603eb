#include "cuset/evaluator/results/verdict.hpp"

namespace cuset {

std::string_view verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::correct:
      return "correct";
    case Verdict::wrong_answer:
      return "wrong_answer";
    case Verdict::compile_error:
      return "compile_error";
    case Verdict::invalid_submission:
      return "invalid_submission";
    case Verdict::runtime_error:
      return "runtime_error";
    case Verdict::timeout:
      return "timeout";
    case Verdict::sandbox_violation:
      return "sandbox_violation";
    case Verdict::hack_suspected:
      return "hack_suspected";
    case Verdict::compiled:
      return "compiled";
    case Verdict::unsupported:
      return "unsupported";
  }
  return "?";
}

std::optional<Verdict> parseVerdict(std::string_view text) {
  for (Verdict v : kAllVerdicts) {
    if (verdictName(v) == text) return v;
  }
  return std::nullopt;
}

bool isSuccess(Verdict verdict) { return verdict == Verdict::correct || verdict == Verdict::compiled; }

}  // namespace cuset
