#include "cuset/refine/refine_loop.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/reports/refine_report.hpp"
#include "cuset/reports/report_writer.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

struct ProblemState {
  std::string id;
  std::vector<ChatMessage> base;
  std::vector<std::vector<ChatMessage>> turns;  // per finished round: the model's answer and the feedback on it
  std::optional<EvalResult> best;               // fastest correct kernel so far (first correct without GPU timing)
  std::string bestResponse;
  int bestRound = 0;
  int bestProgress = 0;  // failureProgress of the closest failure, while nothing is correct
  int stale = 0;         // rounds without improvement
  std::string stop;      // why it stopped; empty while active
  json rounds = json::array();
  json transcript = json::array();
};

std::vector<ChatMessage> promptOf(const ProblemState& s, int history) {
  std::vector<ChatMessage> messages = s.base;
  const std::size_t keep = static_cast<std::size_t>(std::max(0, history));
  const std::size_t from = s.turns.size() > keep ? s.turns.size() - keep : 0;
  for (std::size_t i = from; i < s.turns.size(); ++i) messages.insert(messages.end(), s.turns[i].begin(), s.turns[i].end());
  return messages;
}

// (problem, sample) -> response text, from a round's candidate file.
std::map<std::pair<std::string, std::int64_t>, std::string> readResponses(const fs::path& file) {
  std::map<std::pair<std::string, std::int64_t>, std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    try {
      const json j = json::parse(line);
      out[{j.at("problem").get<std::string>(), j.at("sample").get<std::int64_t>()}] =
          j.contains("response") && j["response"].is_string() ? j["response"].get<std::string>() : j.value("source", "");
    } catch (const json::exception&) {
      // a torn last line: that sample is generated again
    }
  }
  return out;
}

bool timedOnGpu(const EvalResult& r) { return r.verdict == Verdict::correct && isGpuTiming(r.timingKind) && !r.timingSamplesMs.empty(); }

json settingsOf(const RefineOptions& o) {
  json model = o.usesEndpoint() ? json{{"endpoint", o.endpoint.endpoint.baseUrl},
                                       {"model", o.endpoint.parameters.model},
                                       {"temperature", o.endpoint.parameters.temperature},
                                       {"top_p", o.endpoint.parameters.topP},
                                       {"max_tokens", o.endpoint.parameters.maxTokens}}
                                : json{{"checkpoint", fs::absolute(o.checkpoint.modelDir).string()},
                                       {"temperature", o.checkpoint.temperature},
                                       {"top_p", o.checkpoint.topP},
                                       {"max_tokens", o.checkpoint.maxNewTokens}};
  return {{"model", model},
          {"prompt", promptStyleName(o.prompt)},
          {"problems", fs::absolute(o.problemsDir).string()},
          {"only", o.only},
          {"backend", o.backend},
          {"candidates_per_round", o.candidatesPerRound},
          {"feedback", o.feedback == FeedbackDetail::full ? "full" : "brief"},
          {"feedback_candidates", o.feedbackCandidates},
          {"history", o.history},
          {"trials", o.trials},
          {"sizes", o.sizes}};
}

// The run's own record: settings (a resume may not change them), the input seed, what was spent.
struct RunState {
  json settings;
  std::uint64_t seed = 0;
  std::size_t requests = 0;
  std::int64_t tokens = 0;
};

RunState openRun(const RefineOptions& o) {
  const fs::path file = o.outDir / "refine-state.json";
  RunState state{settingsOf(o), o.seed.value_or(std::random_device{}()), 0, 0};
  if (!fs::exists(file)) return state;
  if (!o.resume) throw makeError("{}: a refine run is already here; pass --resume to continue it, or choose another --out", o.outDir.string());
  const json j = readJsonFile(file);
  const json before = j.value("settings", json::object());
  if (before != state.settings) {
    std::vector<std::string> changed;
    for (const auto& [key, value] : state.settings.items()) {
      if (!before.contains(key) || before[key] != value) changed.push_back(key);
    }
    throw makeError(
        "{}: --resume with other settings (changed: {}) would mix two searches; resume with the run's own settings, or choose another --out",
        file.string(), fmt::format("{}", fmt::join(changed, ", ")));
  }
  state.seed = j.at("seed").get<std::uint64_t>();
  state.requests = j.value("requests", std::size_t{0});
  state.tokens = j.value("tokens", std::int64_t{0});
  return state;
}

void saveRun(const RefineOptions& o, const RunState& s) {
  writeJsonFileAtomic(o.outDir / "refine-state.json", {{"settings", s.settings}, {"seed", s.seed}, {"requests", s.requests}, {"tokens", s.tokens}});
}

std::string modelLabel(const RefineOptions& o) {
  if (o.usesEndpoint()) return o.endpoint.modelLabel.empty() ? o.endpoint.parameters.model : o.endpoint.modelLabel;
  return o.checkpoint.modelName.empty() ? o.checkpoint.modelDir.filename().string() : o.checkpoint.modelName;
}

std::size_t mismatchesOf(const EvalResult& r) {
  std::size_t n = 0;
  for (const auto& c : r.comparisons) n += static_cast<std::size_t>(c.mismatches);
  return n;
}

class RefineRun {
 public:
  explicit RefineRun(const RefineOptions& o) : o_(o), state_(openRun(o)), label_(modelLabel(o)) {}

  RefineSummary run() {
    const ProblemSuite suite = ProblemSuite::load(o_.problemsDir);
    suite.requireNoErrors();
    for (const auto& id : o_.only) {
      if (!suite.find(id)) throw makeError("--only {}: no such problem in {}", id, o_.problemsDir.string());
    }
    for (const auto& p : suite.problems()) {
      if (o_.only.empty() || std::find(o_.only.begin(), o_.only.end(), p.id) != o_.only.end()) {
        problems_.push_back(ProblemState{.id = p.id, .base = renderProblemChat(p, o_.prompt, o_.promptContext)});
      }
    }
    fs::create_directories(o_.outDir);
    saveRun(o_, state_);
    RefineSummary summary;
    for (int round = 1; round <= o_.rounds; ++round) {
      std::vector<ProblemState*> active;
      for (auto& p : problems_) {
        if (p.stop.empty()) active.push_back(&p);
      }
      if (active.empty()) break;
      if (budgetSpent()) {
        summary.budgetSpent = true;
        for (auto* p : active) p->stop = "budget spent";
        break;
      }
      log::info("refine: round {}/{}: {} problem(s), {} candidates each", round, o_.rounds, active.size(), o_.candidatesPerRound);
      const bool spent = runRound(round, active);
      summary.roundsRun = round;
      saveRun(o_, state_);
      writeOutputs();
      if (spent) {
        summary.budgetSpent = true;
        for (auto* p : active) {
          if (p->stop.empty()) p->stop = "budget spent";
        }
        break;
      }
    }
    for (auto& p : problems_) {
      if (p.stop.empty()) p.stop = fmt::format("depth {} reached", o_.rounds);
    }
    const json report = writeOutputs();
    summary.problems = problems_.size();
    summary.solved = static_cast<std::size_t>(std::count_if(problems_.begin(), problems_.end(), [](const auto& p) { return p.best.has_value(); }));
    summary.requests = state_.requests;
    summary.tokens = state_.tokens;
    const std::string md = renderRefineMarkdown(report);
    summary.report = writeReportPages(o_.outDir, "refine", report, md, renderRefineHtml(report)).html;
    summary.table = md.substr(0, md.find("\n## Problems"));
    return summary;
  }

 private:
  bool budgetSpent() const { return (o_.maxRequests && state_.requests >= o_.maxRequests) || (o_.maxTokens && state_.tokens >= o_.maxTokens); }

  // Generates and judges one round; true when the budget ran out during it.
  bool runRound(int round, const std::vector<ProblemState*>& active) {
    const fs::path dir = o_.outDir / "rounds" / fmt::format("{:02}", round);
    fs::create_directories(dir);
    const fs::path candidates = dir / "candidates.jsonl";
    std::vector<ChatJob> jobs;
    for (auto* p : active) {
      ChatJob job{p->id, promptOf(*p, o_.history), {}};
      for (int i = 0; i < o_.candidatesPerRound; ++i) job.samples.push_back(static_cast<std::int64_t>((round - 1) * o_.candidatesPerRound + i));
      jobs.push_back(std::move(job));
    }
    bool spent = false;
    if (o_.usesEndpoint()) {
      EndpointGenerateOptions e = o_.endpoint;
      e.outFile = candidates;
      e.modelLabel = label_;
      e.resume = true;  // a finished sample of this round is never asked again
      e.showProgress = o_.showProgress;
      if (o_.maxRequests) e.maxRequests = o_.maxRequests - state_.requests;
      if (o_.maxTokens) e.maxTokens = o_.maxTokens - state_.tokens;
      const auto g = runEndpointJobs(e, jobs);
      state_.requests += g.requests;
      state_.tokens += g.promptTokens + g.completionTokens;
      spent = g.budgetSpent;
    } else if (!complete(candidates, jobs)) {
      GenerateOptions g = o_.checkpoint;
      g.outFile = candidates;
      g.modelName = label_;
      g.showProgress = o_.showProgress;
      const auto s = runGenerationJobs(g, jobs);
      state_.requests += jobs.size();
      state_.tokens += static_cast<std::int64_t>(s.generatedTokens);
    }
    const auto responses = readResponses(candidates);
    if (responses.empty()) return true;  // the budget allowed no request at all

    EvalConfig e;
    e.problemsDir = o_.problemsDir;
    e.candidatesPath = candidates;
    e.outDir = dir / "eval";
    e.backend = *parseBackend(o_.backend);
    e.trials = o_.trials;
    e.sizeSet = o_.sizes;
    e.seed = state_.seed;  // every round sees the same inputs
    e.cuda = o_.cuda;
    e.jobs = o_.jobs;
    e.resume = fs::exists(e.outDir / "results.jsonl");
    e.defaultModel = label_;
    e.showProgress = o_.showProgress;
    e.commandLine = {"cuset", "refine", "--out", o_.outDir.string()};
    const EvalRunSummary judged = runEvaluation(e);

    std::map<std::string, std::vector<const EvalResult*>> byProblem;
    for (const auto& r : judged.results) {
      byProblem[r.problem].push_back(&r);
      json j = toJson(r);
      j["round"] = round;
      results_.push_back(std::move(j));
    }
    for (auto* p : active) update(*p, round, byProblem[p->id], responses, jobs);
    return spent;
  }

  static bool complete(const fs::path& file, const std::vector<ChatJob>& jobs) {
    if (!fs::exists(file)) return false;
    const auto have = readResponses(file);
    for (const auto& job : jobs) {
      for (const auto s : job.samples) {
        if (!have.contains({job.problem, s})) return false;
      }
    }
    return true;
  }

  void update(ProblemState& p, int round, std::vector<const EvalResult*> results,
              const std::map<std::pair<std::string, std::int64_t>, std::string>& responses, const std::vector<ChatJob>& jobs) {
    std::sort(results.begin(), results.end(), [](auto* a, auto* b) { return a->sample < b->sample; });
    auto responseOf = [&](const EvalResult& r) {
      const auto it = responses.find({r.problem, r.sample});
      return it == responses.end() ? std::string() : it->second;
    };
    // The transcript: the prompt of this round and every answer with its verdict.
    const auto job = std::find_if(jobs.begin(), jobs.end(), [&](const ChatJob& j) { return j.problem == p.id; });
    json messages = json::array();
    for (const auto& m : job->messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json answers = json::array();
    std::map<std::string, int> verdicts;
    int correct = 0;
    for (const auto* r : results) {
      answers.push_back({{"sample", r->sample}, {"response", responseOf(*r)}, {"verdict", verdictName(r->verdict)}, {"reason", r->reason}});
      ++verdicts[std::string(verdictName(r->verdict))];
      correct += r->verdict == Verdict::correct;
    }
    p.transcript.push_back({{"round", round}, {"messages", messages}, {"responses", answers}});

    bool improved = false;
    const EvalResult* fastest = nullptr;
    for (const auto* r : results) {
      if (timedOnGpu(*r) && (!fastest || medianOf(r->timingSamplesMs) < medianOf(fastest->timingSamplesMs))) fastest = r;
    }
    if (!p.best) {
      const EvalResult* firstCorrect = nullptr;
      for (const auto* r : results) {
        if (r->verdict == Verdict::correct && !firstCorrect) firstCorrect = r;
      }
      if (const EvalResult* chosen = fastest ? fastest : firstCorrect) {
        p.best = *chosen;
        p.bestResponse = responseOf(*chosen);
        p.bestRound = round;
        improved = true;
        if (!fastest) p.stop = "correct; no GPU timing on this backend, so no performance rounds (CPU times are never performance feedback)";
      } else {
        // The closest failures, with the evaluator's feedback, for the next round.
        // One of each distinct source: k copies of the same kernel teach the model nothing more.
        std::vector<const EvalResult*> failures;
        std::set<std::string> seen;
        for (const auto* r : results) {
          if (seen.insert(r->sourceHash.empty() ? r->origin : r->sourceHash).second) failures.push_back(r);
        }
        std::stable_sort(failures.begin(), failures.end(), [](auto* a, auto* b) {
          if (failureProgress(*a) != failureProgress(*b)) return failureProgress(*a) > failureProgress(*b);
          return mismatchesOf(*a) < mismatchesOf(*b);
        });
        if (failures.size() > static_cast<std::size_t>(o_.feedbackCandidates)) failures.resize(static_cast<std::size_t>(o_.feedbackCandidates));
        if (!failures.empty()) {
          improved = failureProgress(*failures.front()) > p.bestProgress;
          p.bestProgress = std::max(p.bestProgress, failureProgress(*failures.front()));
          std::string feedback = failureFeedback(*failures.front(), o_.feedback);
          // The answer format of the prompt: KernelBench's (ModelNew in Python) or this project's.
          const bool native = o_.prompt == PromptStyle::kernelbenchNative;
          for (std::size_t i = 1; i < failures.size(); ++i) {
            feedback += fmt::format("\n\nAnother attempt of the same round:\n```{}\n{}\n```\n{}", native ? "python" : "cuda", failures[i]->source,
                                    failureFeedback(*failures[i], o_.feedback));
          }
          feedback +=
              native ? "\n\nFix it: answer with the complete corrected ModelNew code, its CUDA compiled by load_inline, in one ```python code block."
                     : "\n\nFix the kernel: answer with the complete corrected kernel and its /*@cuset manifest in one ```cuda code block.";
          p.turns.push_back({{"assistant", responseOf(*failures.front())}, {"user", feedback}});
        }
      }
    } else if (fastest && medianOf(fastest->timingSamplesMs) < medianOf(p.best->timingSamplesMs)) {
      // Faster and correct: only a correct kernel is ever kept.
      p.best = *fastest;
      p.bestResponse = responseOf(*fastest);
      p.bestRound = round;
      improved = true;
    }
    if (p.best && p.stop.empty()) p.turns.push_back({{"assistant", p.bestResponse}, {"user", performanceFeedback(*p.best)}});
    p.stale = improved ? 0 : p.stale + 1;
    if (p.stop.empty() && p.stale >= o_.patience) p.stop = fmt::format("no improvement in {} round(s)", p.stale);

    json row = {{"round", round}, {"candidates", results.size()}, {"correct", correct}, {"verdicts", verdicts}, {"solved", p.best.has_value()}};
    if (p.best) {
      if (const auto s = speedupOf(*p.best)) row["best_speedup"] = *s;
      if (timedOnGpu(*p.best)) row["best_median_ms"] = medianOf(p.best->timingSamplesMs);
    }
    p.rounds.push_back(row);
  }

  // results.jsonl, best.jsonl, transcripts/, and the report's data; all replaced atomically.
  json writeOutputs() {
    std::string lines;
    for (const auto& r : results_) lines += dumpJson(r) + "\n";
    writeFileAtomic(o_.outDir / "results.jsonl", lines);
    std::string best;
    fs::create_directories(o_.outDir / "transcripts");
    json problems = json::array();
    for (const auto& p : problems_) {
      if (p.best) {
        best += dumpJson(json{{"problem", p.id}, {"sample", p.best->sample}, {"model", label_}, {"source", p.best->source}, {"round", p.bestRound}}) +
                "\n";
      }
      std::string transcript;
      for (const auto& t : p.transcript) transcript += dumpJson(t) + "\n";
      std::string file = p.id;
      std::replace(file.begin(), file.end(), '/', '_');
      writeFileAtomic(o_.outDir / "transcripts" / (file + ".jsonl"), transcript);
      json row = {{"problem", p.id}, {"rounds", p.rounds}, {"stop", p.stop}, {"transcript", "transcripts/" + file + ".jsonl"}};
      if (p.best) {
        row["best"] = {{"round", p.bestRound}, {"sample", p.best->sample}};
        if (const auto s = speedupOf(*p.best)) row["best"]["speedup"] = *s;
        if (timedOnGpu(*p.best)) row["best"]["median_ms"] = medianOf(p.best->timingSamplesMs);
        if (p.best->peakFraction) row["best"]["peak_fraction"] = *p.best->peakFraction;
      }
      problems.push_back(row);
    }
    writeFileAtomic(o_.outDir / "best.jsonl", best);
    return computeRefineReport(problems, {{"model", label_},
                                          {"settings", state_.settings},
                                          {"requests", state_.requests},
                                          {"tokens", state_.tokens},
                                          {"rounds", o_.rounds},
                                          {"patience", o_.patience}});
  }

  const RefineOptions& o_;
  RunState state_;
  std::string label_;
  std::vector<ProblemState> problems_;
  std::vector<json> results_;
};

}  // namespace

RefineSummary runRefine(const RefineOptions& o) {
  if (o.candidatesPerRound < 1 || o.candidatesPerRound > 1000) throw makeError("--candidates-per-round {}: expected 1 to 1000", o.candidatesPerRound);
  if (o.rounds < 1 || o.rounds > 100) throw makeError("--rounds {}: expected 1 to 100", o.rounds);
  if (o.patience < 1) throw makeError("--patience {}: expected at least 1", o.patience);
  if (o.backend != "sim" && o.backend != "cuda") throw makeError("--backend {}: expected sim or cuda", o.backend);
  if (o.usesEndpoint() == !o.checkpoint.modelDir.empty()) throw Error("give either --endpoint URL --model NAME or --model DIR");
  return RefineRun(o).run();
}

}  // namespace cuset
