#include "cuset/reports/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <set>

#include "cuset/common/text_table.hpp"

namespace cuset {
namespace {

int levelOf(const std::string& problemId) {
  // "level2/gemm_relu" -> 2; anything else -> 0 ("unknown level")
  if (!problemId.starts_with("level")) return 0;
  const std::size_t slash = problemId.find('/');
  try {
    return std::stoi(problemId.substr(5, slash - 5));
  } catch (const std::exception&) {
    return 0;
  }
}

struct ProblemTally {
  std::int64_t n = 0, c = 0;
  std::vector<double> speedups;  // correct candidates timed on a GPU
  std::map<std::string, std::int64_t> verdicts;
  std::map<std::string, std::string> sources;  // source hash -> verdict, so reruns of identical code compare exactly
  const EvalResult* fastest = nullptr;         // correct candidate with the lowest median time (GPU)
};

// The metrics of a set of problems. pass@k averages per-problem values over the problems with n >= k;
// fast_p and speedups exist only when some candidate was timed on a GPU.
nlohmann::json groupMetrics(const std::vector<const ProblemTally*>& problems, const std::vector<int>& ks, bool gpuTimed,
                            const std::vector<const EvalResult*>& candidates) {
  nlohmann::json g;
  std::int64_t n = 0, c = 0;
  for (const auto* p : problems) {
    n += p->n;
    c += p->c;
  }
  g["problems"] = problems.size();
  g["candidates"] = n;
  g["correct"] = c;
  g["correct_rate"] = n ? static_cast<double>(c) / static_cast<double>(n) : 0.0;
  // Not judged (the harness could not run them): outside `candidates` and every rate, counted apart.
  g["unsupported"] = std::count_if(candidates.begin(), candidates.end(), [](const EvalResult* r) { return r->verdict == Verdict::unsupported; });
  nlohmann::json passAt = nlohmann::json::object();
  for (int k : ks) {
    double sum = 0.0;
    std::size_t counted = 0;
    for (const auto* p : problems) {
      if (auto v = passAtK(p->n, p->c, k)) {
        sum += *v;
        ++counted;
      }
    }
    if (counted > 0) passAt[std::to_string(k)] = {{"value", sum / static_cast<double>(counted)}, {"problems", counted}};
  }
  g["pass_at_k"] = passAt;
  if (gpuTimed) {
    std::vector<double> speedups;
    for (const auto* p : problems) speedups.insert(speedups.end(), p->speedups.begin(), p->speedups.end());
    nlohmann::json fast = nlohmann::json::object();
    for (double p : kFastP) {
      const auto hits = std::count_if(speedups.begin(), speedups.end(), [&](double s) { return s > p; });
      fast[fmt::format("{}", p)] = n ? static_cast<double>(hits) / static_cast<double>(n) : 0.0;
    }
    g["fast_p"] = fast;
    if (auto gm = geometricMean(speedups)) g["geomean_speedup"] = *gm;
    g["timed_correct"] = speedups.size();
  }
  std::map<std::string, std::int64_t> verdicts;
  std::map<std::string, std::map<std::string, std::int64_t>> reasons;
  for (const auto* r : candidates) {
    const std::string v(verdictName(r->verdict));
    ++verdicts[v];
    if (!r->reason.empty()) ++reasons[v][reasonClass(r->reason)];
  }
  g["verdicts"] = verdicts;
  nlohmann::json top = nlohmann::json::object();
  for (const auto& [v, byReason] : reasons) {
    std::vector<std::pair<std::string, std::int64_t>> sorted(byReason.begin(), byReason.end());
    std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    if (sorted.size() > 5) sorted.resize(5);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [text, count] : sorted) list.push_back({{"reason", text}, {"count", count}});
    top[v] = list;
  }
  g["top_reasons"] = top;
  return g;
}

}  // namespace

std::vector<int> passAtKValues(std::int64_t samplesPerProblem) {
  std::vector<int> ks(std::begin(kPassAtK), std::end(kPassAtK));
  if (samplesPerProblem > 0 && std::find(ks.begin(), ks.end(), samplesPerProblem) == ks.end()) {
    ks.push_back(static_cast<int>(samplesPerProblem));
    std::sort(ks.begin(), ks.end());
  }
  return ks;
}

std::optional<double> relativeNoise(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::nullopt;
  double mean = 0.0;
  for (double s : samples) mean += s;
  mean /= static_cast<double>(samples.size());
  if (!(mean > 0.0)) return std::nullopt;
  double var = 0.0;
  for (double s : samples) var += (s - mean) * (s - mean);
  var /= static_cast<double>(samples.size() - 1);
  return std::sqrt(var) / mean;
}

std::string reasonClass(const std::string& reason) {
  static const std::regex kTrial(R"(^trial \d+ of \d+: )");
  static const std::regex kNumber(R"([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?%?)");
  static const std::regex kIndex(R"(\[N(, N)*\])");
  std::string s = std::regex_replace(reason, kTrial, "");
  s = std::regex_replace(s, kNumber, "N");
  s = std::regex_replace(s, kIndex, "[...]");
  if (const std::size_t cut = s.find(": got "); cut != std::string::npos) s = s.substr(0, cut);  // values differ per case
  s = shortened(s, 120);
  return s;
}

double groupMetric(const nlohmann::json& group, const char* field, const char* key) {
  if (!group.is_object() || !group.contains(field) || !group[field].contains(key)) return -1.0;
  const auto& v = group[field][key];
  return v.is_object() ? v.value("value", -1.0) : v.get<double>();
}

std::vector<std::size_t> leaderboardOrder(const std::vector<nlohmann::json>& groups) {
  std::vector<std::size_t> order(groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double fa = groupMetric(groups[a], "fast_p", "1"), fb = groupMetric(groups[b], "fast_p", "1");
    if (fa != fb) return fa > fb;
    const double pa = groupMetric(groups[a], "pass_at_k", "1"), pb = groupMetric(groups[b], "pass_at_k", "1");
    if (pa != pb) return pa > pb;
    const auto rate = [](const nlohmann::json& g) { return g.is_object() ? g.value("correct_rate", 0.0) : -1.0; };
    return rate(groups[a]) > rate(groups[b]);
  });
  return order;
}

namespace {

// Problems flagged defective in their problem.yaml (run.json's problem_defects), which the headline
// metrics leave out unless the run (or `cuset report`) says include_defective.
std::set<std::string> excludedProblems(const nlohmann::json& runInfo) {
  std::set<std::string> out;
  if (!runInfo.is_object() || runInfo.value("include_defective", false)) return out;
  const nlohmann::json defects = runInfo.value("problem_defects", nlohmann::json::object());
  for (const auto& [id, defect] : defects.items()) out.insert(id);
  return out;
}

// What a run covered, per level and in all: problems judged, flagged defective (and whether counted),
// and unsupported on this backend (every candidate `unsupported`: no size set to run, a broken
// reference); the suites and commits the problems came from.
nlohmann::json coverageOf(const std::vector<EvalResult>& results, const nlohmann::json& runInfo) {
  std::map<std::string, std::pair<std::size_t, std::size_t>> perProblem;  // id -> candidates, unsupported
  for (const auto& r : results) {
    auto& [n, unsupported] = perProblem[r.problem];
    ++n;
    if (r.verdict == Verdict::unsupported) ++unsupported;
  }
  const nlohmann::json defects = runInfo.is_object() ? runInfo.value("problem_defects", nlohmann::json::object()) : nlohmann::json::object();
  const nlohmann::json origins = runInfo.is_object() ? runInfo.value("problem_origins", nlohmann::json::object()) : nlohmann::json::object();
  nlohmann::json levels = nlohmann::json::object(), suites = nlohmann::json::object();
  auto bump = [&](const std::string& key, const char* field) {
    nlohmann::json& level = levels[key];
    if (level.is_null()) level = {{"problems", 0}, {"flagged", 0}, {"unsupported", 0}};
    level[field] = level[field].get<int>() + 1;
  };
  for (const auto& [id, counts] : perProblem) {
    for (const std::string& key : {std::to_string(levelOf(id)), std::string("all")}) {
      bump(key, "problems");
      if (defects.contains(id)) bump(key, "flagged");
      if (counts.first == counts.second) bump(key, "unsupported");
    }
    if (origins.contains(id)) {
      const auto& o = origins[id];
      auto& suite = suites[o.value("suite", "?")];
      if (suite.is_null()) suite = {{"problems", 0}, {"commits", nlohmann::json::array()}};
      suite["problems"] = suite["problems"].get<int>() + 1;
      const std::string commit = o.value("commit", "");
      if (!commit.empty()) {
        auto commits = suite.value("commits", std::vector<std::string>{});
        if (std::find(commits.begin(), commits.end(), commit) == commits.end()) commits.push_back(commit);
        suite["commits"] = commits;
      }
    }
  }
  // Which size sets the verdicts were reached at ("small", "small+large", "full"): a verdict the
  // simulator also checked at KernelBench's own sizes (batch cut) says more than one at `small` alone.
  nlohmann::json sizes = nlohmann::json::object();
  for (const auto& r : results) {
    if (r.sizes.empty()) continue;
    std::string key;
    for (const auto& s : r.sizes) key += (key.empty() ? "" : "+") + s;
    sizes[key] = sizes.value(key, 0) + 1;
  }
  nlohmann::json flagged = nlohmann::json::object();
  for (const auto& [id, defect] : defects.items()) {
    if (perProblem.contains(id)) flagged[id] = defect;
  }
  return {{"levels", levels},
          {"suites", suites},
          {"sizes", sizes},
          {"flagged", flagged},
          {"include_defective", runInfo.is_object() && runInfo.value("include_defective", false)}};
}

// Every candidate counted by model and problem, and what the run as a whole had.
struct RunTallies {
  // model -> problem -> tally. The pure tallies count a correct candidate that runs library ops (a kept
  // nn.Conv2d, a returned torch.matmul) as not solved: the pure-kernel metrics.
  std::map<std::string, std::map<std::string, ProblemTally>> tallies, pureTallies;
  std::set<std::string> modelsWithLibrary;
  std::map<std::string, std::vector<const EvalResult*>> byModel;  // for verdict reasons
  bool gpuTimed = false;
  std::set<std::string> backends;
};

RunTallies tallyResults(const std::vector<EvalResult>& results) {
  RunTallies run;
  for (const auto& r : results) {
    ProblemTally& t = run.tallies[r.model][r.problem];
    ProblemTally& pure = run.pureTallies[r.model][r.problem];
    ++t.verdicts[std::string(verdictName(r.verdict))];
    if (!r.libraryOps.empty()) run.modelsWithLibrary.insert(r.model);
    run.byModel[r.model].push_back(&r);
    // Not judged, so neither a success nor a failure: outside every rate (a problem left with none
    // has n = 0 and no pass@k).
    if (r.verdict == Verdict::unsupported) continue;
    ++t.n;
    ++pure.n;
    if (!r.sourceHash.empty()) t.sources[r.sourceHash] = std::string(verdictName(r.verdict));
    if (!r.backend.empty()) run.backends.insert(r.backend);
    if (isGpuTiming(r.timingKind)) run.gpuTimed = true;
    if (r.verdict != Verdict::correct) continue;
    ++t.c;
    if (r.libraryOps.empty()) ++pure.c;
    if (auto s = speedupOf(r)) {
      t.speedups.push_back(*s);
      if (r.libraryOps.empty()) pure.speedups.push_back(*s);
      if (!t.fastest || medianOf(r.timingSamplesMs) < medianOf(t.fastest->timingSamplesMs)) t.fastest = &r;
    }
  }
  return run;
}

// One problem's row of a model: its tally, pass@k and, timed on a GPU, its speedups and fastest candidate.
nlohmann::json problemRow(const ProblemTally& t, const std::vector<int>& ks, bool gpuTimed) {
  nlohmann::json row = {{"n", t.n}, {"c", t.c}, {"verdicts", t.verdicts}, {"sources", t.sources}};
  nlohmann::json pk = nlohmann::json::object();
  for (int k : ks) {
    if (auto v = passAtK(t.n, t.c, k)) pk[std::to_string(k)] = *v;
  }
  row["pass_at_k"] = pk;
  if (!gpuTimed) return row;
  if (!t.speedups.empty()) {
    row["best_speedup"] = *std::max_element(t.speedups.begin(), t.speedups.end());
    row["geomean_speedup"] = *geometricMean(t.speedups);
  }
  if (t.fastest) {
    nlohmann::json best = {
        {"sample", t.fastest->sample}, {"median_ms", medianOf(t.fastest->timingSamplesMs)}, {"samples", t.fastest->timingSamplesMs.size()}};
    if (auto noise = relativeNoise(t.fastest->timingSamplesMs)) best["noise"] = *noise;
    row["fastest"] = best;
  }
  return row;
}

// The k of pass@k for a model: 1, 5, 10 and the n it sampled (the fewest any problem got); and that range.
std::pair<std::int64_t, std::int64_t> samplesPerProblem(const std::map<std::string, ProblemTally>& problems) {
  std::int64_t fewest = 0, most = 0;
  for (const auto& [id, t] : problems) {
    if (t.n == 0) continue;  // only unsupported candidates
    fewest = fewest == 0 ? t.n : std::min(fewest, t.n);
    most = std::max(most, t.n);
  }
  return {fewest, most};
}

// One model's section of the summary: overall, pure-kernel, per-level and per-problem metrics.
nlohmann::json modelMetrics(const std::string& model, const RunTallies& run, const std::set<std::string>& excluded, const nlohmann::json& runInfo) {
  const auto& problems = run.tallies.at(model);
  const bool library = run.modelsWithLibrary.contains(model);
  const auto [fewest, most] = samplesPerProblem(problems);
  const std::vector<int> ks = passAtKValues(fewest);
  std::vector<const ProblemTally*> all;
  std::map<int, std::vector<const ProblemTally*>> perLevel;
  nlohmann::json problemRows = nlohmann::json::object();
  const nlohmann::json origins = runInfo.is_object() ? runInfo.value("problem_origins", nlohmann::json::object()) : nlohmann::json::object();
  for (const auto& [id, t] : problems) {
    nlohmann::json row = problemRow(t, ks, run.gpuTimed);
    row["level"] = levelOf(id);
    if (excluded.contains(id)) {
      row["excluded"] = "flagged defective: outside the headline metrics";
    } else {
      all.push_back(&t);
      perLevel[levelOf(id)].push_back(&t);
    }
    if (library) row["c_pure"] = run.pureTallies.at(model).at(id).c;
    // Imported problems keep where they came from (run.json's problem_origins), e.g. KernelBench's file.
    if (origins.contains(id)) row["origin"] = origins[id];
    problemRows[id] = row;
  }
  std::vector<const EvalResult*> counted;
  std::map<int, std::vector<const EvalResult*>> candidatesPerLevel;
  for (const auto* r : run.byModel.at(model)) {
    if (excluded.contains(r->problem)) continue;
    candidatesPerLevel[levelOf(r->problem)].push_back(r);
    counted.push_back(r);
  }
  nlohmann::json m;
  m["samples_per_problem"] = {{"min", fewest}, {"max", most}};
  m["pass_at_k_values"] = ks;
  m["overall"] = groupMetrics(all, ks, run.gpuTimed, counted);
  if (library) {
    std::vector<const ProblemTally*> pureAll;
    for (const auto& [id, t] : run.pureTallies.at(model)) {
      if (!excluded.contains(id)) pureAll.push_back(&t);
    }
    nlohmann::json pure = groupMetrics(pureAll, ks, run.gpuTimed, {});
    for (const char* field : {"unsupported", "verdicts", "top_reasons"}) pure.erase(field);
    pure["library_candidates"] = std::count_if(counted.begin(), counted.end(), [](const EvalResult* r) { return !r->libraryOps.empty(); });
    m["pure_kernel"] = std::move(pure);
  }
  nlohmann::json levels = nlohmann::json::object();
  for (const auto& [level, tallyList] : perLevel)
    levels[std::to_string(level)] = groupMetrics(tallyList, ks, run.gpuTimed, candidatesPerLevel[level]);
  m["levels"] = levels;
  m["problems"] = problemRows;
  return m;
}

// The models ranked (leaderboardOrder), each with its headline figures.
nlohmann::json leaderboardRows(const nlohmann::json& models) {
  std::vector<std::string> names;
  std::vector<nlohmann::json> groups;
  for (const auto& [model, m] : models.items()) {
    names.push_back(model);
    groups.push_back(m["overall"]);
  }
  nlohmann::json leaderboard = nlohmann::json::array();
  for (const std::size_t i : leaderboardOrder(groups)) {
    const nlohmann::json& overall = groups[i];
    nlohmann::json row = {{"rank", leaderboard.size() + 1}, {"model", names[i]}, {"correct_rate", overall["correct_rate"]}};
    if (double p = groupMetric(overall, "pass_at_k", "1"); p >= 0) row["pass_at_1"] = p;
    if (double f = groupMetric(overall, "fast_p", "1"); f >= 0) row["fast_1"] = f;
    if (overall.contains("geomean_speedup")) row["geomean_speedup"] = overall["geomean_speedup"];
    if (const auto& pure = models[names[i]].value("pure_kernel", nlohmann::json()); pure.is_object()) {
      if (double p = groupMetric(pure, "pass_at_k", "1"); p >= 0) row["pure_pass_at_1"] = p;
      if (double f = groupMetric(pure, "fast_p", "1"); f >= 0) row["pure_fast_1"] = f;
    }
    leaderboard.push_back(row);
  }
  return leaderboard;
}

// What run.json said about the run, as much as the summary repeats.
nlohmann::json runSection(const nlohmann::json& runInfo, const std::set<std::string>& backends) {
  nlohmann::json run = nlohmann::json::object();
  for (const char* field :
       {"backend", "arch", "seed", "started", "finished", "status", "environment", "command_line", "sim", "problems_dir", "candidates"}) {
    if (runInfo.is_object() && runInfo.contains(field)) run[field] = runInfo[field];
  }
  if (!run.contains("backend") && backends.size() == 1) run["backend"] = *backends.begin();
  return run;
}

}  // namespace

nlohmann::json computeSummary(const std::vector<EvalResult>& results, const nlohmann::json& runInfo, const std::vector<std::string>& warnings) {
  const std::set<std::string> excluded = excludedProblems(runInfo);
  const RunTallies run = tallyResults(results);
  nlohmann::json models = nlohmann::json::object();
  for (const auto& [model, problems] : run.tallies) models[model] = modelMetrics(model, run, excluded, runInfo);
  return {
      {"schema_version", kSummarySchemaVersion},
      {"run", runSection(runInfo, run.backends)},
      {"timing", run.gpuTimed ? "gpu" : "none"},
      {"candidates", results.size()},
      {"coverage", coverageOf(results, runInfo)},
      {"warnings", warnings},
      {"leaderboard", leaderboardRows(models)},
      {"models", models},
      {"kernelbench_agreement", kernelBenchAgreement(results)},
  };
}

}  // namespace cuset
