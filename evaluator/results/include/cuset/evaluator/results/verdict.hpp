#pragma once
// Exactly one verdict per candidate (DESIGN §4). `compiled` is the compile-only backend's success.
#include <optional>
#include <ostream>
#include <string_view>

namespace cuset {

enum class Verdict {
  correct,
  wrong_answer,
  compile_error,
  invalid_submission,
  runtime_error,
  timeout,
  sandbox_violation,
  hack_suspected,
  compiled,
  // The harness cannot judge it (this backend cannot run it, the problem's reference is broken):
  // never the candidate's fault, and left out of pass@k and fast_p (DESIGN §4).
  unsupported,
};

inline constexpr Verdict kAllVerdicts[] = {Verdict::correct,       Verdict::wrong_answer, Verdict::compile_error,     Verdict::invalid_submission,
                                           Verdict::runtime_error, Verdict::timeout,      Verdict::sandbox_violation, Verdict::hack_suspected,
                                           Verdict::compiled,      Verdict::unsupported};

std::string_view verdictName(Verdict verdict);
std::optional<Verdict> parseVerdict(std::string_view text);
// correct and compiled are successes; everything else must carry a reason.
bool isSuccess(Verdict verdict);

// Its name, so that test failures and logs say `unsupported` rather than 9.
inline std::ostream& operator<<(std::ostream& out, Verdict verdict) { return out << verdictName(verdict); }

}  // namespace cuset
