#include "cuset/evaluator/results/eval_result.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/candidate/candidate.hpp"

namespace cuset {

std::string EvalResult::key() const { return candidateKey(model, problem, sample); }

nlohmann::json toJson(const EvalResult& r) {
  nlohmann::json j = {
      {"problem", r.problem},
      {"sample", r.sample},
      {"model", r.model},
      {"verdict", verdictName(r.verdict)},
      {"reason", r.reason},
      {"backend", r.backend},
      {"origin", r.origin},
      {"source_hash", r.sourceHash},
      {"timings_ms",
       {{"manifest", jsonDouble(r.timings.manifestMs)},
        {"translate", jsonDouble(r.timings.translateMs)},
        {"compile", jsonDouble(r.timings.compileMs)},
        {"sim_compile", jsonDouble(r.timings.simCompileMs)},
        {"run", jsonDouble(r.timings.runMs)},
        {"total", jsonDouble(r.timings.totalMs)}}},
      {"compile_cache_hit", r.compileCacheHit},
      {"compile_log", r.compileLog},
      {"source", r.source},
      {"trials", r.trials},
      {"nondeterministic", r.nondeterministic},
  };
  nlohmann::json comparisons = nlohmann::json::array();
  for (const auto& c : r.comparisons) comparisons.push_back(toJson(c));
  j["comparisons"] = comparisons;
  if (!r.flags.empty()) j["flags"] = r.flags;
  if (!r.sizes.empty()) j["sizes"] = r.sizes;
  if (!r.form.empty()) j["form"] = r.form;
  if (!r.libraryOps.empty()) j["library_ops"] = r.libraryOps;
  if (r.device) j["device"] = *r.device;
  if (r.kernelbench) {
    const KernelBenchCheck& k = *r.kernelbench;
    j["kernelbench_correct"] = k.correct ? nlohmann::json(*k.correct) : nlohmann::json(nullptr);
    j["kernelbench"] = {{"compiled", k.compiled},
                        {"trials", k.trials},
                        {"passed", k.passed},
                        {"max_difference", jsonDoubles(k.maxDifference)},
                        {"avg_difference", jsonDoubles(k.avgDifference)},
                        {"issue", k.issue},
                        {"gpu", k.gpu}};
    if (k.correctAgainstExact) j["kernelbench"]["correct_against_exact"] = *k.correctAgainstExact;
    if (!k.disagreement.empty()) j["kernelbench"]["disagreement"] = k.disagreement;
  }
  if (!r.staticFindings.empty()) {
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : r.staticFindings) findings.push_back({{"check", f.check}, {"message", f.message}, {"strict", f.strict}});
    j["kernelbench_static"] = findings;
  }
  if (!r.timingKind.empty()) {
    j["timing"] = {{"kind", r.timingKind}, {"samples_ms", jsonDoubles(r.timingSamplesMs)}, {"median_ms", jsonDouble(medianOf(r.timingSamplesMs))}};
    if (!r.referenceTimingSamplesMs.empty()) {
      j["timing"]["reference_samples_ms"] = jsonDoubles(r.referenceTimingSamplesMs);
      j["timing"]["reference_median_ms"] = jsonDouble(medianOf(r.referenceTimingSamplesMs));
      if (!r.referenceTimingKeptFrom.empty()) j["timing"]["reference_measured_at"] = r.referenceTimingKeptFrom;
    }
    if (auto s = speedupOf(r)) j["timing"]["speedup"] = jsonDouble(*s);
    if (r.peakFraction) j["timing"]["peak_fraction"] = jsonDouble(*r.peakFraction);
    if (!r.kernelbenchTimingSamplesMs.empty()) j["timing"]["kernelbench"] = kernelbenchTimingJson(r);
  }
  return j;
}

bool isGpuTiming(std::string_view kind) { return kind.starts_with("cuda"); }

double meanOf(const std::vector<double>& samples) {
  if (samples.empty()) return 0.0;
  double sum = 0.0;
  for (double s : samples) sum += s;
  return sum / static_cast<double>(samples.size());
}

std::optional<double> kernelbenchSpeedupOf(const EvalResult& r) {
  if (r.verdict != Verdict::correct) return std::nullopt;
  const double candidate = meanOf(r.kernelbenchTimingSamplesMs), reference = meanOf(r.kernelbenchReferenceTimingSamplesMs);
  if (!(candidate > 0.0) || !(reference > 0.0)) return std::nullopt;
  return reference / candidate;
}

nlohmann::json kernelbenchTimingJson(const EvalResult& r) {
  // KernelBench's runtime_stats: the mean (its `runtime`), std, min, max and the number of trials.
  auto stats = [](const std::vector<double>& s) {
    const double mean = meanOf(s);
    double var = 0.0;
    for (double x : s) var += (x - mean) * (x - mean);
    return nlohmann::json{{"mean_ms", jsonDouble(mean)},
                          {"std_ms", jsonDouble(s.size() > 1 ? std::sqrt(var / static_cast<double>(s.size() - 1)) : 0.0)},
                          {"min_ms", jsonDouble(*std::min_element(s.begin(), s.end()))},
                          {"max_ms", jsonDouble(*std::max_element(s.begin(), s.end()))},
                          {"trials", s.size()}};
  };
  nlohmann::json k = {
      {"method", "cuda_event"}, {"samples_ms", jsonDoubles(r.kernelbenchTimingSamplesMs)}, {"candidate", stats(r.kernelbenchTimingSamplesMs)}};
  if (!r.kernelbenchReferenceTimingSamplesMs.empty()) {
    k["reference_samples_ms"] = jsonDoubles(r.kernelbenchReferenceTimingSamplesMs);
    k["reference"] = stats(r.kernelbenchReferenceTimingSamplesMs);
  }
  if (auto s = kernelbenchSpeedupOf(r)) k["speedup"] = jsonDouble(*s);
  // KernelBench's candidate time over CuSeT's: below 1 where its events miss work CUPTI counts (a kernel
  // on another stream) or count less of it.
  if (const double cuset = medianOf(r.timingSamplesMs); cuset > 0.0) k["ratio_to_cuset"] = jsonDouble(meanOf(r.kernelbenchTimingSamplesMs) / cuset);
  return k;
}

double medianOf(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  if (samples.size() % 2 == 1) return samples[mid];
  const double upper = samples[mid];
  return (*std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

std::optional<double> speedupOf(const EvalResult& r) {
  if (r.verdict != Verdict::correct || !isGpuTiming(r.timingKind)) return std::nullopt;
  const double candidate = medianOf(r.timingSamplesMs), reference = medianOf(r.referenceTimingSamplesMs);
  if (!(candidate > 0.0) || !(reference > 0.0)) return std::nullopt;
  return reference / candidate;
}

EvalResult evalResultFromJson(const nlohmann::json& j) {
  try {
    EvalResult r;
    r.problem = j.at("problem").get<std::string>();
    r.sample = jsonInteger(j.at("sample"), "sample");
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
    r.trials = j.contains("trials") ? static_cast<int>(jsonInteger(j["trials"], "trials", 0, 1 << 20)) : 0;
    r.nondeterministic = j.value("nondeterministic", false);
    if (auto c = j.find("comparisons"); c != j.end()) {
      for (const auto& item : *c) r.comparisons.push_back(outputComparisonFromJson(item));
    }
    if (auto t = j.find("timing"); t != j.end()) {
      r.timingKind = t->at("kind").get<std::string>();
      r.timingSamplesMs = doublesFromJson(t->at("samples_ms"), "timing.samples_ms");
      if (auto ref = t->find("reference_samples_ms"); ref != t->end())
        r.referenceTimingSamplesMs = doublesFromJson(*ref, "timing.reference_samples_ms");
      r.referenceTimingKeptFrom = t->value("reference_measured_at", "");
      if (auto pf = t->find("peak_fraction"); pf != t->end() && !pf->is_null()) r.peakFraction = doubleFromJson(*pf, "timing.peak_fraction");
      if (auto kb = t->find("kernelbench"); kb != t->end() && kb->is_object()) {
        r.kernelbenchTimingSamplesMs = doublesFromJson(kb->at("samples_ms"), "timing.kernelbench.samples_ms");
        if (auto ref = kb->find("reference_samples_ms"); ref != kb->end())
          r.kernelbenchReferenceTimingSamplesMs = doublesFromJson(*ref, "timing.kernelbench.reference_samples_ms");
      }
    }
    if (auto f = j.find("flags"); f != j.end()) r.flags = f->get<std::vector<std::string>>();
    if (auto f = j.find("sizes"); f != j.end()) r.sizes = f->get<std::vector<std::string>>();
    r.form = j.value("form", "");
    if (auto l = j.find("library_ops"); l != j.end()) r.libraryOps = l->get<std::vector<std::string>>();
    if (auto d = j.find("device"); d != j.end() && d->is_number_integer()) r.device = d->get<int>();
    if (auto k = j.find("kernelbench"); k != j.end() && k->is_object()) {
      KernelBenchCheck check;
      check.compiled = k->value("compiled", false);
      if (auto c = j.find("kernelbench_correct"); c != j.end() && c->is_boolean()) check.correct = c->get<bool>();
      check.trials = k->value("trials", 0);
      check.passed = k->value("passed", 0);
      if (auto d = k->find("max_difference"); d != k->end()) check.maxDifference = doublesFromJson(*d, "kernelbench.max_difference");
      if (auto d = k->find("avg_difference"); d != k->end()) check.avgDifference = doublesFromJson(*d, "kernelbench.avg_difference");
      check.issue = k->value("issue", "");
      check.gpu = k->value("gpu", "");
      if (auto c = k->find("correct_against_exact"); c != k->end() && c->is_boolean()) check.correctAgainstExact = c->get<bool>();
      check.disagreement = k->value("disagreement", "");
      r.kernelbench = std::move(check);
    }
    if (auto f = j.find("kernelbench_static"); f != j.end() && f->is_array()) {
      for (const auto& item : *f) r.staticFindings.push_back({item.value("check", ""), item.value("message", ""), item.value("strict", false)});
    }
    if (auto t = j.find("timings_ms"); t != j.end()) {
      auto stage = [&](const char* name) { return t->contains(name) ? doubleFromJson(t->at(name), "timings_ms") : 0.0; };
      r.timings.manifestMs = stage("manifest");
      r.timings.translateMs = stage("translate");
      r.timings.compileMs = stage("compile");
      r.timings.simCompileMs = stage("sim_compile");
      r.timings.runMs = stage("run");
      r.timings.totalMs = stage("total");
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw makeError("result record: {}", e.what());
  }
}

}  // namespace cuset
