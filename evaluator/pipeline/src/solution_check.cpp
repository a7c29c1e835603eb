#include "cuset/evaluator/pipeline/solution_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cuset/common/file_util.hpp"
#include "cuset/common/text_table.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// The text after `marker` on its line, trimmed; nullopt when the marker does not occur.
std::optional<std::string> markerValue(std::string_view source, std::string_view marker) {
  const std::size_t at = source.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t begin = at + marker.size();
  std::size_t end = source.find('\n', begin);
  if (end == std::string_view::npos) end = source.size();
  std::string_view value = source.substr(begin, end - begin);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) value.remove_suffix(1);
  return std::string(value);
}

bool runsKernels(BackendKind backend) { return backend != BackendKind::compileOnly; }

// Verdicts the compile-only backend can give, so expectations it can check.
bool decidedBeforeRunning(Verdict v) { return v == Verdict::compile_error || v == Verdict::invalid_submission; }

std::string canonicalText(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(p, ec);
  return (ec ? p : c).string();
}

}  // namespace

bool isKnownBadSolution(const fs::path& file) { return file.filename().string().starts_with("bad_"); }

Expected<SolutionExpectation> readSolutionExpectation(const fs::path& file, std::string_view source) {
  SolutionExpectation e;
  const std::optional<std::string> verdict = markerValue(source, "// @expect:");
  if (!isKnownBadSolution(file)) {
    if (verdict && *verdict != "correct") {
      return Unexpected(fmt::format("{}: records '@expect: {}' but is not named bad_*.cu; rename it or drop the line", file.string(), *verdict));
    }
    return e;
  }
  if (!verdict) return Unexpected(fmt::format("{}: a known-bad solution must record its verdict in a line '// @expect: <verdict>'", file.string()));
  const std::optional<Verdict> parsed = parseVerdict(*verdict);
  if (!parsed || *parsed == Verdict::compiled) return Unexpected(fmt::format("{}: '@expect: {}' is not a verdict", file.string(), *verdict));
  if (*parsed == Verdict::correct) return Unexpected(fmt::format("{}: a bad_*.cu cannot expect 'correct'", file.string()));
  e.verdict = *parsed;
  e.reasonContains = markerValue(source, "// @expect-reason:").value_or("");
  if (const auto sim = markerValue(source, "// @expect-sim:")) {
    e.simVerdict = parseVerdict(*sim);
    if (!e.simVerdict || *e.simVerdict == Verdict::compiled || *e.simVerdict == Verdict::correct) {
      return Unexpected(fmt::format("{}: '@expect-sim: {}' is not a failing verdict", file.string(), *sim));
    }
    e.simReasonContains = markerValue(source, "// @expect-sim-reason:").value_or("");
  }
  return e;
}

// Why `problem` needs no solution judged correct in this check, or empty: a problem flagged defective
// (no honest kernel can match a stochastic reference), one the backend has no size set for, and an
// imported one (KernelBench's files come without solutions; one may be added, and is then checked).
std::string noSolutionNeeded(const Problem& problem, BackendKind backend, bool hasSolutions) {
  if (problem.defect) return fmt::format("flagged defective ({}): no correct solution is required", problem.defect->kind);
  if (backend == BackendKind::sim && !problem.findSizeSet("small")) return "no size set small enough to simulate: checked on a GPU only";
  if (problem.origin && !hasSolutions) return fmt::format("imported from {} without solutions", problem.origin->suite);
  return "";
}

std::vector<SolutionCheckRow> compareSolutionVerdicts(const ProblemSuite& suite, const std::vector<EvalResult>& results, BackendKind backend) {
  std::map<std::string, const EvalResult*> byFile;
  for (const auto& r : results) byFile[canonicalText(r.origin)] = &r;

  std::vector<SolutionCheckRow> rows;
  for (const auto& problem : suite.problems()) {
    const fs::path dir = problem.directory / "solutions";
    std::vector<fs::path> files;
    if (fs::is_directory(dir)) {
      for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_regular_file() && entry.path().extension() == ".cu") files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    const std::string exempt = noSolutionNeeded(problem, backend, !files.empty());
    const bool unsimulable = backend == BackendKind::sim && !problem.findSizeSet("small");
    bool anyGood = false;
    for (const auto& file : files) {
      SolutionCheckRow row{.problem = problem.id, .file = file.filename().string()};
      if (unsimulable) {  // its solutions would all be `unsupported` here
        rows.push_back({.problem = problem.id, .file = row.file, .expected = "-", .reason = exempt, .skipped = true});
        continue;
      }
      const auto found = byFile.find(canonicalText(file));
      if (found != byFile.end()) {
        row.got = std::string(verdictName(found->second->verdict));
        row.reason = found->second->reason;
      }
      const auto expectation = readSolutionExpectation(file, readFile(file));
      if (!expectation) {
        row.expected = "?";
        row.failure = expectation.error();
        rows.push_back(std::move(row));
        continue;
      }
      const bool simView = backend == BackendKind::sim && expectation->simVerdict;
      const Verdict want = simView ? *expectation->simVerdict : expectation->verdict;
      const std::string& reasonContains = simView ? expectation->simReasonContains : expectation->reasonContains;
      row.expected = std::string(verdictName(want));
      if (found == byFile.end()) {
        row.failure = "was not evaluated";
      } else if (want == Verdict::correct) {
        const Verdict success = runsKernels(backend) ? Verdict::correct : Verdict::compiled;
        if (found->second->verdict != success)
          row.failure = fmt::format("expected {}, got {}", verdictName(success), row.got);
        else
          anyGood = true;
      } else if (!runsKernels(backend) && !decidedBeforeRunning(want)) {
        row.skipped = true;
      } else if (found->second->verdict != want) {
        row.failure = fmt::format("expected {}, got {}", row.expected, row.got);
      } else if (!reasonContains.empty() && row.reason.find(reasonContains) == std::string::npos) {
        row.failure = fmt::format("reason does not mention '{}'", reasonContains);
      }
      rows.push_back(std::move(row));
    }
    if (!anyGood && !exempt.empty() && !unsimulable) {
      rows.push_back({.problem = problem.id, .expected = "-", .reason = exempt, .skipped = true});
    } else if (!anyGood && !unsimulable &&
               std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r.problem == problem.id && !r.ok(); })) {
      rows.push_back({.problem = problem.id, .expected = "correct", .failure = "no solution judged correct (add solutions/<name>.cu)"});
    }
  }
  return rows;
}

std::string formatSolutionCheck(const std::vector<SolutionCheckRow>& rows) {
  TextTable table({"problem", "solution", "expected", "got", "status", "detail"});
  std::size_t solutions = 0, failed = 0, skipped = 0, bad = 0, unsolved = 0;
  std::size_t exempt = 0;
  for (const auto& r : rows) {
    if (r.file.empty() && r.skipped) {
      ++exempt;
    } else if (r.file.empty()) {
      ++unsolved;
    } else {
      ++solutions;
      failed += !r.ok();
      skipped += r.skipped;
      bad += isKnownBadSolution(r.file);
    }
    const std::string status = !r.ok() ? "FAIL" : r.skipped ? "skip" : "ok";
    const std::string& detail = !r.ok() ? r.failure : r.reason;
    table.addRow({r.problem, r.file.empty() ? "-" : r.file, r.expected, r.got.empty() ? "-" : r.got, status, ellipsize(detail, 90)});
  }
  std::string out = table.render();
  out += fmt::format("{} solution(s) checked ({} known-bad): {} as expected, {} failed, {} skipped (need a backend that runs kernels)\n", solutions,
                     bad, solutions - failed - skipped, failed, skipped);
  if (unsolved > 0) out += fmt::format("{} problem(s) without a solution judged correct\n", unsolved);
  if (exempt > 0) out += fmt::format("{} problem(s) need none (flagged defective, imported without solutions, or not simulable)\n", exempt);
  return out;
}

}  // namespace cuset
