#include "cuset/loop/leaderboard_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/models/endpoint_generation.hpp"
#include "cuset/reports/leaderboard_report.hpp"
#include "cuset/reports/report_writer.hpp"
#include "cuset/trainer/generation.hpp"
#include "stage_ledger.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

json sourceOf(const LeaderboardModel& m) {
  json s = m.isEndpoint() ? json{{"endpoint", m.endpoint.baseUrl}, {"model", m.servedModel}} : json{{"checkpoint", m.checkpoint.string()}};
  s["prompt"] = promptStyleName(m.prompt);
  s["temperature"] = m.temperature;
  s["top_p"] = m.topP;
  s["max_tokens"] = m.maxTokens;
  if (m.seed) s["seed"] = *m.seed;
  return s;
}

// Totals over a model's candidate file: samples, failures, tokens (each sample's share), latency.
json generationTotals(const fs::path& candidates) {
  json g = {{"samples", 0}, {"failed", 0}};
  if (!fs::exists(candidates)) return g;
  std::int64_t samples = 0, failed = 0, prompt = 0, completion = 0, missing = 0;
  std::vector<double> latencies;
  std::ifstream in(candidates);
  bool endpoint = false;
  for (std::string line; std::getline(in, line);) {
    json r;
    try {
      r = json::parse(line);
    } catch (const json::exception&) {
      continue;
    }
    ++samples;
    failed += r.contains("error");
    if (!r.contains("request_key")) continue;  // the built-in model records no usage
    endpoint = true;
    if (r.contains("usage") && r["usage"].is_object()) {
      prompt += r["usage"].value("prompt_tokens", std::int64_t{0});
      completion += r["usage"].value("completion_tokens", std::int64_t{0});
    } else {
      ++missing;
    }
    if (r.contains("latency_s") && r["latency_s"].is_number()) latencies.push_back(r["latency_s"].get<double>());
  }
  g = {{"samples", samples}, {"failed", failed}};
  if (endpoint) {
    g["prompt_tokens"] = prompt;
    g["completion_tokens"] = completion;
    g["usage_missing"] = missing;
  }
  if (!latencies.empty()) {
    std::sort(latencies.begin(), latencies.end());
    g["latency_s_median"] = latencies[latencies.size() / 2];
  }
  return g;
}

void generate(const LeaderboardConfig& c, const LeaderboardModel& m, const fs::path& candidates, const StageLedger& ledger, bool showProgress) {
  if (m.isEndpoint()) {
    // Always run: resuming sends nothing for a finished sample and re-asks a changed one.
    EndpointGenerateOptions e;
    e.endpoint = m.endpoint;
    e.parameters = ChatParameters{m.servedModel, m.temperature, m.topP, m.maxTokens, m.seed, {}};
    e.problemsDir = c.problemsDir;
    e.outFile = candidates;
    e.modelLabel = m.name;
    e.samples = c.k;
    e.prompt = m.prompt;
    e.promptContext = {m.kernelbenchRoot, {}};
    e.useN = m.useN;
    e.resume = true;
    e.showProgress = showProgress;
    const auto s = runEndpointGeneration(e);
    log::info("leaderboard {}: {}: {} samples ({} reused, {} requests, {} retries, {} failed)", c.name, m.name, s.samples, s.reused, s.requests,
              s.retries, s.failed);
    return;
  }
  const json inputs = {{"source", sourceOf(m)}, {"k", c.k}, {"problems", fs::absolute(c.problemsDir).string()}};
  if (ledger.doneWith(m.name + ".generate", inputs) && fs::exists(candidates)) return;
  GenerateOptions g;
  g.modelDir = m.checkpoint;
  g.problemsDir = c.problemsDir;
  g.outFile = candidates;
  g.modelName = m.name;
  g.samples = c.k;
  g.temperature = m.temperature;
  g.topP = m.topP;
  g.maxNewTokens = m.maxTokens;
  g.seed = m.seed.value_or(1);
  g.prompt = m.prompt;
  g.promptContext = {m.kernelbenchRoot, {}};
  g.showProgress = showProgress;
  runGeneration(g);
  ledger.finish(m.name + ".generate", inputs, 0.0);
}

// Returns false when the evaluation had already finished with these inputs.
bool evaluate(const LeaderboardConfig& c, const LeaderboardModel& m, const fs::path& candidates, const fs::path& evalDir, const StageLedger& ledger,
              bool showProgress) {
  const json inputs = {{"candidates", hashString(readFile(candidates)).hex()},
                       {"backend", c.backend},
                       {"sizes", c.sizes},
                       {"trials", c.trials},
                       {"seed", c.seed},
                       {"timer", c.timer},
                       {"problems", fs::absolute(c.problemsDir).string()}};
  const std::string stage = m.name + ".eval";
  if (ledger.doneWith(stage, inputs) && fs::exists(evalDir / "results.jsonl")) return false;
  // New candidates or settings: judged from scratch, never merged into an older run.
  if (ledger.startedWithOtherInputs(stage, inputs) || !fs::exists(evalDir / "results.jsonl")) fs::remove_all(evalDir);
  ledger.start(stage, inputs);
  EvalConfig e;
  e.problemsDir = c.problemsDir;
  e.candidatesPath = candidates;
  e.outDir = evalDir;
  e.backend = *parseBackend(c.backend);
  e.trials = c.trials;
  e.seed = c.seed;  // every model sees the same inputs
  e.sizeSet = c.sizes;
  e.cuda.timer = c.timer;
  e.cuda.maxSeconds = c.maxTimingSeconds;
  e.jobs = c.jobs;
  e.resume = fs::exists(evalDir / "results.jsonl");
  e.showProgress = showProgress;
  e.defaultModel = m.name;
  e.commandLine = {"cuset", "leaderboard", "--config", c.source.string()};
  runEvaluation(e);
  ledger.finish(stage, inputs, 0.0);
  return true;
}

// What each problem's name on the page opens: KernelBench's own file for an imported problem, else the
// problem.yaml the models were prompted from. A suite that does not load leaves the page without them.
json problemStatements(const fs::path& problemsDir) {
  json out = json::object();
  try {
    const ProblemSuite suite = ProblemSuite::load(problemsDir);
    for (const Problem& p : suite.problems()) {
      std::string statement;
      if (p.origin && !p.origin->source.empty()) {
        statement = p.origin->source;
      } else if (fs::is_regular_file(p.directory / "problem.yaml")) {
        statement = readFile(p.directory / "problem.yaml");
      }
      out[p.id] = {{"name", p.name}, {"tags", p.tags}, {"description", p.description}, {"statement", statement}};
    }
  } catch (const std::exception& e) {
    log::warn("leaderboard: the problems' statements are left out of the page: {}", e.what());
  }
  return out;
}

}  // namespace

LeaderboardSummary runLeaderboard(const LeaderboardConfig& c, const LeaderboardRunOptions& options) {
  LeaderboardSummary summary;
  fs::create_directories(c.outDir);
  const StageLedger ledger(c.outDir / "state");
  if (options.compareDir && !fs::is_directory(*options.compareDir / "models")) {
    throw makeError("--compare {}: not a leaderboard folder (it has no models/)", options.compareDir->string());
  }
  LeaderboardInput in;
  in.name = c.name;
  in.k = c.k;
  if (options.compareDir) in.compareLabel = options.compareDir->string();
  in.info = {{"config", c.source.string()}, {"problems", c.problemsDir.string()}, {"backend", c.backend}, {"sizes", c.sizes}, {"trials", c.trials},
             {"eval_seed", c.seed}};
  for (std::size_t i = 0; i < c.models.size(); ++i) {
    const LeaderboardModel& m = c.models[i];
    const fs::path dir = c.outDir / "models" / m.name;
    const fs::path candidates = dir / "candidates.jsonl";
    const fs::path evalDir = dir / "eval";
    LeaderboardEntry entry;
    if (!options.reportOnly) {
      log::info("leaderboard {}: model {}/{} {}", c.name, i + 1, c.models.size(), m.name);
      fs::create_directories(dir);
      // One model's dead endpoint or broken checkpoint does not cost the others their night.
      try {
        generate(c, m, candidates, ledger, options.showProgress);
        (evaluate(c, m, candidates, evalDir, ledger, options.showProgress) ? summary.modelsRun : summary.modelsSkipped) += 1;
      } catch (const std::exception& e) {
        entry.error = e.what();
        summary.failures.push_back(fmt::format("{}: {}", m.name, e.what()));
        log::error("leaderboard {}: {}: {}", c.name, m.name, e.what());
      }
    }
    entry.name = m.name;
    entry.source = sourceOf(m);
    entry.generation = generationTotals(candidates);
    entry.promptPricePerMTok = m.promptPricePerMTok;
    entry.completionPricePerMTok = m.completionPricePerMTok;
    if (entry.error.empty() && fs::exists(evalDir / "results.jsonl")) {
      // Reports are rewritten every time, so include_defective changes the board without judging again.
      ReportOptions r{.runDir = evalDir, .includeDefective = c.includeDefective};
      const fs::path base = options.compareDir ? *options.compareDir / "models" / m.name / "eval" : fs::path();
      if (options.compareDir && fs::exists(base / "results.jsonl")) r.compareDir = base;
      ReportOutcome outcome = writeRunReports(r);
      entry.summary = std::move(outcome.summary);
      entry.results = std::move(outcome.results);
      entry.report = fs::relative(evalDir / "report.html", c.outDir).string();
    }
    in.entries.push_back(std::move(entry));
  }
  in.problems = problemStatements(c.problemsDir);
  const json leaderboard = computeLeaderboard(in);
  summary.regression = leaderboard["regression"].get<bool>();
  const std::string md = renderLeaderboardMarkdown(leaderboard);
  summary.html = writeReportPages(c.outDir, "leaderboard", leaderboard, md, renderLeaderboardHtml(leaderboard)).html;
  summary.table = md.substr(0, md.find("\n## What these numbers cover"));
  return summary;
}

}  // namespace cuset
