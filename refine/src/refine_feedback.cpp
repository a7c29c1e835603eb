#include "cuset/refine/refine_feedback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "cuset/reports/metrics.hpp"

namespace cuset {
namespace {

constexpr std::size_t kMaxCompilerLines = 12;

// The compiler's error lines (with their line numbers, as NVRTC or the host compiler wrote them).
std::vector<std::string> compilerErrors(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line) && lines.size() < kMaxCompilerLines;) {
    if (line.find("error") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace

int failureProgress(const EvalResult& r) {
  switch (r.verdict) {
    case Verdict::correct:
      return 5;
    case Verdict::wrong_answer:
      return 4;
    case Verdict::runtime_error:
    case Verdict::timeout:
    case Verdict::hack_suspected:
    case Verdict::sandbox_violation:
      return 3;
    case Verdict::compiled:
    case Verdict::compile_error:
      return 2;
    default:
      return 1;
  }
}

std::string failureFeedback(const EvalResult& r, FeedbackDetail detail) {
  std::string text =
      fmt::format("The evaluator judged this kernel {}: {}", verdictName(r.verdict), r.reason.empty() ? "(no reason given)" : r.reason);
  if (detail == FeedbackDetail::full) {
    if (r.verdict == Verdict::compile_error) {
      const auto errors = compilerErrors(r.compileLog);
      if (!errors.empty()) {
        text += "\nCompiler errors:";
        for (const auto& e : errors) text += "\n  " + e;
      }
    }
    for (const auto& c : r.comparisons) {
      if (c.passed()) continue;
      const std::string stats = c.describe();
      if (r.reason.find(stats) == std::string::npos) text += "\nOutput " + stats;
    }
  }
  return text;
}

std::string performanceFeedback(const EvalResult& best) {
  const double median = medianOf(best.timingSamplesMs);
  const double reference = medianOf(best.referenceTimingSamplesMs);
  std::string text = fmt::format("This kernel is correct. Measured on the GPU: median {:.4f} ms (relative spread {:.1f}% over {} timings)", median,
                                 100 * relativeNoise(best.timingSamplesMs).value_or(0.0), best.timingSamplesMs.size());
  if (const auto speedup = speedupOf(best)) {
    text += fmt::format("; the PyTorch reference: median {:.4f} ms; speedup {:.2f}x", reference, *speedup);
  } else {
    text += "; the reference was not timed on this GPU, so there is no speedup";
  }
  if (best.peakFraction) text += fmt::format("; {:.1f}% of the speed-of-light bound", 100 * *best.peakFraction);
  text += ".\nWrite a faster kernel for the same problem. It must stay correct: a faster kernel that gives wrong results is rejected.";
  return text;
}

}  // namespace cuset
