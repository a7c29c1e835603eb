#include "cuset/evaluator/kernelbench/kernelbench_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_options.hpp"
#include "cuset/evaluator/results/estimators.hpp"

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

namespace cuset {
namespace {

const ProblemOrigin* kernelBenchOrigin(const ProblemSuite& suite, const std::string& id) {
  const Problem* p = suite.find(id);
  return p && p->origin && p->origin->suite == "kernelbench" ? &*p->origin : nullptr;
}

// KernelBench's `compiled`: its build (load_inline) and ModelNew's definition went through.
bool kernelBenchCompiled(const EvalResult& r) {
  if (r.kernelbench) return r.kernelbench->compiled;
  return r.verdict != Verdict::compile_error && r.verdict != Verdict::invalid_submission;
}

// KernelBench's get_timing_stats of `s` (milliseconds).
ordered_json timingStats(const std::vector<double>& s, const KernelBenchHardware& hardware, const std::string& device) {
  const double mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  double var = 0.0;
  for (double x : s) var += (x - mean) * (x - mean);
  return {{"mean", mean},
          {"std", std::sqrt(var / static_cast<double>(s.size()))},  // numpy's std, as its get_timing_stats
          {"min", *std::min_element(s.begin(), s.end())},
          {"max", *std::max_element(s.begin(), s.end())},
          {"num_trials", s.size()},
          {"hardware", hardware.name},
          {"device", device}};
}

ordered_json runtimeStats(const EvalResult& r, const KernelBenchHardware& hardware, const std::string& device) {
  if (!isGpuTiming(r.timingKind) || r.timingSamplesMs.empty()) return ordered_json::object();
  return timingStats(r.timingSamplesMs, hardware, device);
}

// The reference timings of the run as KernelBench's baseline file
// (results/timing/<hardware>/baseline_time_torch.json: {"level1": {"19_ReLU.py": runtime_stats}}), from
// its own cuda_event samples where --kernelbench-timing took them, else CuSeT's: a baseline of this
// machine that a later run's --kernelbench-baseline, or KernelBench's own analysis, reads. Empty
// without GPU reference timings.
ordered_json baselineFromRun(const ProblemSuite& suite, const std::vector<EvalResult>& results, const KernelBenchHardware& hardware) {
  ordered_json out = ordered_json::object();
  std::map<std::string, const EvalResult*> byProblem;  // the first timed result of each problem
  for (const auto& r : results) {
    if (r.verdict == Verdict::correct && isGpuTiming(r.timingKind) && !r.referenceTimingSamplesMs.empty()) byProblem.try_emplace(r.problem, &r);
  }
  for (const auto& [id, r] : byProblem) {
    const ProblemOrigin* o = kernelBenchOrigin(suite, id);
    if (!o) continue;
    const auto& samples = r->kernelbenchReferenceTimingSamplesMs.empty() ? r->referenceTimingSamplesMs : r->kernelbenchReferenceTimingSamplesMs;
    ordered_json stats = timingStats(samples, hardware, fmt::format("cuda:{}", r->device.value_or(0)));
    stats["method"] = r->kernelbenchReferenceTimingSamplesMs.empty() ? r->timingKind : std::string("cuda_event");
    out[fmt::format("level{}", o->level)][fs::path(o->file).filename().string()] = stats;
  }
  return out;
}

ordered_json metadataOf(const EvalResult& r, const KernelBenchHardware& hardware, const std::string& device) {
  ordered_json m = {{"hardware", hardware.name}, {"device", device}};
  switch (r.verdict) {
    case Verdict::compile_error:
      m["compilation_error"] = r.reason;
      break;
    case Verdict::runtime_error:
    case Verdict::timeout:
    case Verdict::sandbox_violation:
      m["runtime_error"] = r.reason;
      break;
    case Verdict::wrong_answer:
    case Verdict::hack_suspected:
      m["correctness_issue"] = r.reason;
      break;
    default:
      break;
  }
  if (!r.comparisons.empty() && r.verdict == Verdict::wrong_answer) {
    double maxDiff = 0.0;
    for (const auto& c : r.comparisons) maxDiff = std::max(maxDiff, c.maxAbsError);
    m["max_difference"] = {fmt::format("{:.6f}", maxDiff)};
  }
  if (r.kernelbench && !r.kernelbench->avgDifference.empty()) {
    ordered_json maxes = ordered_json::array(), avgs = ordered_json::array();
    for (double d : r.kernelbench->maxDifference) maxes.push_back(fmt::format("{:.6f}", d));
    for (double d : r.kernelbench->avgDifference) avgs.push_back(fmt::format("{:.6f}", d));
    m["max_difference"] = maxes;
    m["avg_difference"] = avgs;
  }
  if (r.trials > 0) {
    const int passed = r.verdict == Verdict::correct ? r.trials : r.trials - 1;
    m["correctness_trials"] = fmt::format("({} / {})", passed, r.trials);
  }
  if (std::find(r.flags.begin(), r.flags.end(), "speedup_above_10x") != r.flags.end()) m["excessive_speedup"] = true;
  m["cuset_verdict"] = verdictName(r.verdict);
  m["cuset_reason"] = r.reason;
  m["kernelbench_correct"] = r.kernelbench && r.kernelbench->correct ? ordered_json(*r.kernelbench->correct) : ordered_json(nullptr);
  if (r.kernelbench && !r.kernelbench->issue.empty()) m["kernelbench_issue"] = r.kernelbench->issue;
  if (!r.staticFindings.empty()) {
    ordered_json findings = ordered_json::array();
    for (const auto& f : r.staticFindings) findings.push_back({{"check", f.check}, {"message", f.message}, {"strict", f.strict}});
    m["kernelbench_static"] = findings;
  }
  m["cuset_origin"] = r.origin;
  return m;
}

// KernelBench's baseline timing file: {"level1": {"19_ReLU.py": {"mean": ms, ...}}}.
std::map<std::string, double> baselineMeans(const fs::path& file, int level) {
  const nlohmann::json j = readJsonFile(file);
  const std::string key = fmt::format("level{}", level);
  std::map<std::string, double> means;
  if (!j.is_object() || !j.contains(key) || !j[key].is_object()) return means;
  for (const auto& [name, entry] : j[key].items()) {
    if (!entry.is_object() || !entry.contains("mean") || !entry["mean"].is_number()) {
      throw makeError("{}: {}/{} has no numeric \"mean\" (KernelBench's baseline timing format)", file.string(), key, name);
    }
    means[name] = entry["mean"].get<double>();
  }
  return means;
}

// benchmark_eval_analysis.py's summary and speedup metrics for one level, over the problems of this run
// (sample 0 of each, as it reads them).
ordered_json analysisResults(const ordered_json& evalResults, const fs::path& baselineFile, int level,
                             const std::map<std::string, std::string>& fileOfNumber) {
  const auto baseline = baselineMeans(baselineFile, level);
  std::size_t compiled = 0, correct = 0;
  std::vector<std::optional<double>> speedups;
  ordered_json missing = ordered_json::array();
  bool timed = false;
  for (const auto& [number, samples] : evalResults.items()) {
    const ordered_json* first = nullptr;
    for (const auto& s : samples) {
      if (s["sample_id"] == 0) first = &s;
    }
    if (!first) continue;
    compiled += (*first)["compiled"].get<bool>();
    const bool ok = (*first)["correctness"].get<bool>();
    correct += ok;
    const double runtime = (*first)["runtime"].get<double>();
    timed = timed || runtime > 0.0;
    auto it = baseline.find(fileOfNumber.at(number));
    if (it == baseline.end()) missing.push_back(fileOfNumber.at(number));
    speedups.push_back(ok && runtime > 0.0 && it != baseline.end() ? std::optional(it->second / runtime) : std::nullopt);
  }
  const std::size_t n = speedups.size();
  ordered_json fastP = ordered_json::object();
  for (double p : kFastP) fastP[fmt::format("{:.1f}", p)] = timed ? ordered_json(kernelBenchFastP(speedups, p)) : ordered_json(nullptr);
  std::vector<double> correctSpeedups;
  for (const auto& s : speedups) {
    if (s) correctSpeedups.push_back(*s);
  }
  const std::optional<double> geomean = geometricMean(correctSpeedups);
  ordered_json out = {{"level", level},
                      {"baseline", baselineFile.string()},
                      {"summary",
                       {{"total_problems", n},
                        {"total_evaluated", n},
                        {"compiled_count", compiled},
                        {"correct_count", correct},
                        {"compilation_rate", n ? double(compiled) / double(n) : 0.0},
                        {"correctness_rate", n ? double(correct) / double(n) : 0.0}}},
                      {"speedup_metrics",
                       {{"geometric_mean_speedup", geomean ? ordered_json(*geomean)
                                                   : timed ? ordered_json(0.0)
                                                           : ordered_json(nullptr)},
                        {"fast_p", fastP}}}};
  if (!timed) out["note"] = "nothing was timed (the simulator times no kernel): fast_p and speedups need --backend cuda";
  if (!missing.empty()) out["not_in_baseline"] = missing;
  return out;
}

}  // namespace

double kernelBenchFastP(const std::vector<std::optional<double>>& speedups, double p) {
  if (speedups.empty()) return 0.0;
  const auto above = std::count_if(speedups.begin(), speedups.end(), [&](const std::optional<double>& s) { return s && *s > p; });
  return double(above) / double(speedups.size());
}

ordered_json kernelBenchEvalResults(const ProblemSuite& suite, const std::vector<EvalResult>& results, const KernelBenchHardware& hardware) {
  std::map<int, std::vector<const EvalResult*>> byNumber;
  for (const auto& r : results) {
    if (const ProblemOrigin* o = kernelBenchOrigin(suite, r.problem)) byNumber[o->number].push_back(&r);
  }
  ordered_json out = ordered_json::object();
  for (auto& [number, rs] : byNumber) {
    std::sort(rs.begin(), rs.end(), [](const EvalResult* a, const EvalResult* b) { return a->sample < b->sample; });
    ordered_json samples = ordered_json::array();
    for (const EvalResult* r : rs) {
      const std::string device = hardware.gpu ? fmt::format("cuda:{}", r->device.value_or(0)) : "cpu";
      const ordered_json stats = runtimeStats(*r, hardware, device);
      samples.push_back({{"sample_id", r->sample},
                         {"compiled", kernelBenchCompiled(*r)},
                         {"correctness", r->verdict == Verdict::correct},
                         {"metadata", metadataOf(*r, hardware, device)},
                         {"runtime", stats.empty() ? -1.0 : stats["mean"].get<double>()},
                         {"runtime_stats", stats}});
    }
    out[std::to_string(number)] = samples;
  }
  return out;
}

ordered_json kernelBenchPassAtKResults(const ordered_json& evalResults, const std::vector<int>& ks) {
  ordered_json problems = ordered_json::object();
  std::size_t totalSamples = 0, totalCorrect = 0, withSamples = 0;
  std::map<int, std::pair<double, std::size_t>> sums;  // k -> (sum, problems that have it)
  for (const auto& [id, samples] : evalResults.items()) {
    const int n = static_cast<int>(samples.size());
    int c = 0;
    for (const auto& s : samples) c += s["correctness"].get<bool>() && s["compiled"].get<bool>();
    ordered_json entry = {{"total_samples", n}, {"correct_samples", c}};
    for (int k : ks) {
      const int used = std::min(k, n);                                          // KernelBench lowers k to n, and names the entry by the k it used
      entry[fmt::format("pass@{}", used)] = passAtK(n, c, used).value_or(0.0);  // k lowered to 0 (no samples): 0, as KernelBench's formula gives
    }
    for (int k : ks) {
      if (auto it = entry.find(fmt::format("pass@{}", k)); it != entry.end()) {
        sums[k].first += it->get<double>();
        ++sums[k].second;
      }
    }
    totalSamples += n;
    totalCorrect += c;
    withSamples += n > 0;
    problems[id] = entry;
  }
  const std::size_t total = problems.size();
  ordered_json averages = ordered_json::object();
  for (int k : ks) averages[fmt::format("avg_pass@{}", k)] = total ? sums[k].first / double(total) : 0.0;
  ordered_json metadata = {{"total_problems", total},
                           {"problems_with_samples", withSamples},
                           {"total_evaluated_samples", totalSamples},
                           {"total_correct_samples", totalCorrect}};
  for (int k : ks) metadata[fmt::format("pass@{}_count", k)] = sums[k].second;
  return {{"averages", averages}, {"metadata", metadata}, {"problems", problems}};
}

std::vector<fs::path> writeKernelBenchResultFiles(const fs::path& runDir, const ProblemSuite& suite, const std::vector<EvalResult>& results,
                                                  const KernelBenchRunOptions& options, const KernelBenchHardware& hardware) {
  std::map<int, std::vector<EvalResult>> byLevel;
  for (const auto& r : results) {
    if (const ProblemOrigin* o = kernelBenchOrigin(suite, r.problem)) byLevel[o->level].push_back(r);
  }
  std::vector<fs::path> written;
  if (const ordered_json baseline = baselineFromRun(suite, results, hardware); !baseline.empty()) {
    const fs::path file = runDir / "timing" / pathComponentOf(hardware.name) / "baseline_time_torch.json";
    fs::create_directories(file.parent_path());
    writeFileAtomic(file, baseline.dump(2) + "\n");
    written.push_back(file);
  }
  for (const auto& [level, levelResults] : byLevel) {
    const fs::path dir = byLevel.size() == 1 ? runDir : runDir / "kernelbench" / fmt::format("level{}", level);
    fs::create_directories(dir);
    const ordered_json evalResults = kernelBenchEvalResults(suite, levelResults, hardware);
    writeFileAtomic(dir / "eval_results.json", evalResults.dump(4) + "\n");
    written.push_back(dir / "eval_results.json");
    bool several = false;
    for (const auto& [id, samples] : evalResults.items()) several = several || samples.size() > 1;
    if (several) {
      writeFileAtomic(dir / "pass_at_k_results.json", kernelBenchPassAtKResults(evalResults, options.passAtK).dump(2) + "\n");
      written.push_back(dir / "pass_at_k_results.json");
    }
    if (!options.baseline.empty()) {
      std::map<std::string, std::string> fileOfNumber;
      for (const auto& r : levelResults) {
        const ProblemOrigin* o = kernelBenchOrigin(suite, r.problem);
        fileOfNumber[std::to_string(o->number)] = fs::path(o->file).filename().string();
      }
      writeFileAtomic(dir / "analysis_results.json", analysisResults(evalResults, options.baseline, level, fileOfNumber).dump(2) + "\n");
      written.push_back(dir / "analysis_results.json");
    }
  }
  return written;
}

}  // namespace cuset
