#include "cuset/loop/loop_runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cuset/common/json_util.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/loop/work_eta.hpp"
#include "stage_ledger.hpp"
#include "cuset/reports/loop_report.hpp"
#include "cuset/reports/report_writer.hpp"
#include "cuset/reports/run_data.hpp"
#include "cuset/trainer/generation.hpp"
#include "cuset/trainer/train_config.hpp"
#include "cuset/trainer/training.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::pair<std::int64_t, double>> readLossCurve(const fs::path& metrics) {
  std::vector<std::pair<std::int64_t, double>> out;
  std::ifstream in(metrics);
  std::string line;
  while (std::getline(in, line)) {
    try {
      const json j = json::parse(line);
      out.emplace_back(j.at("step").get<std::int64_t>(), j.at("loss").get<double>());
    } catch (const json::exception&) {
      // A torn last line of an interrupted run: the curve ends one point earlier.
    }
  }
  return out;
}

fs::path pretrainedDir(const LoopConfig& c, const fs::path& trainData) {
  return TrainConfig::parse(c.trainYaml(c.objectives.front(), c.seeds.front(), trainData), c.source.string(), c.source.parent_path()).modelPath;
}

std::string formatDuration(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 60 ? fmt::format("{}m{:02}s", s / 60, s % 60) : fmt::format("{}s", s);
}

}  // namespace

std::vector<LoopRun> planLoopRuns(const LoopConfig& c) {
  std::vector<LoopRun> runs;
  std::vector<std::string> names;
  if (c.baseline) names.push_back("untrained");
  if (c.base) names.push_back("base");
  for (const auto& o : c.objectives) names.push_back(o.name);
  for (const auto& name : names) {
    for (auto seed : c.seeds) {
      const std::string run = fmt::format("{}-s{}", name, seed);
      runs.push_back({name, seed, run, c.outDir / "runs" / run});
    }
  }
  return runs;
}

namespace {

// Where the loop's data comes from: synthesised into the loop's folder, or the config's files.
struct LoopData {
  fs::path trainData;
  fs::path heldoutDir;
  json inputs;  // what the data stage is run with, and what every later stage depends on
  synth::SynthOptions synthOptions;
};

LoopData loopData(const LoopConfig& c, const LoopRunOptions& options) {
  LoopData d{c.trainData, c.heldoutDir, json(), synth::SynthOptions()};
  if (!c.synth) {
    d.inputs = {{"train", fs::absolute(d.trainData).string()}, {"heldout", fs::absolute(d.heldoutDir).string()}};
    return d;
  }
  d.synthOptions = *c.synth;
  d.synthOptions.out = c.outDir / "data" / "train.jsonl";
  d.synthOptions.showProgress = options.showProgress;
  const auto paths = synth::SynthPaths::forOutput(d.synthOptions.out);
  d.trainData = paths.train;
  d.heldoutDir = paths.heldoutDir;
  const auto& o = d.synthOptions;
  d.inputs = {{"per_family", o.perFamily},
              {"seed", o.seed},
              {"families", o.families},
              {"heldout_families", o.heldoutFamilies},
              {"heldout_fraction", o.heldoutVariantFraction},
              {"heldout_instances", o.heldoutInstances},
              {"heldout_variants", o.heldoutVariants},
              {"heldout_per_family", o.heldoutPerFamily},
              {"trials", o.trials}};
  return d;
}

void requireKnownPart(const LoopConfig& c, const std::vector<LoopRun>& runs, const std::string& only) {
  if (only.empty() || only == "shared" || std::any_of(runs.begin(), runs.end(), [&](const LoopRun& r) { return r.name == only; })) return;
  std::vector<std::string> names = {"shared"};
  for (const auto& r : runs) names.push_back(r.name);
  throw makeError("--only {}: {} has no such part; its parts are: {}", only, c.source.string(), fmt::join(names, ", "));
}

struct Stage {
  std::string id;
  std::string kind;  // data, base, init, train, generate, eval
  const LoopRun* run = nullptr;
};

// The loop's stages in the order they run, what each is run with (its ledger inputs) and the work it
// consumes (for the ETA).
class LoopPlan {
 public:
  LoopPlan(const LoopConfig& c, const std::vector<LoopRun>& runs, LoopData data)
      : c_(c), data_(std::move(data)), baseDir_(c.outDir / "base"), warmStart_(c.base ? baseDir_ / "train" / "final" : fs::path()) {
    if (c.synth) stages.push_back({"data", "data", nullptr});
    if (c.base) stages.push_back({"base.train", "base", nullptr});
    for (const auto& r : runs) {
      // The baseline's "training" is 0 steps (random init + tokenizer): its own kind, so it does not skew the ETA.
      const bool trains = !(r.objective == "untrained" && c.pretrained()) && r.objective != "base";
      if (trains) stages.push_back({r.name + ".train", r.objective == "untrained" ? "init" : "train", &r});
      stages.push_back({r.name + ".generate", "generate", &r});
      stages.push_back({r.name + ".eval", "eval", &r});
    }
  }

  std::vector<Stage> stages;
  const LoopData& data() const { return data_; }
  const fs::path& baseDir() const { return baseDir_; }
  const fs::path& warmStart() const { return warmStart_; }

  json inputs(const Stage& s) const {
    if (s.kind == "data") return data_.inputs;
    if (s.kind == "base") return {{"train_yaml", c_.baseTrainYaml(data_.trainData)}, {"data", data_.inputs}};
    const LoopRun& r = *s.run;
    if (s.kind == "train" || s.kind == "init") return trainInputs(r);
    if (s.kind == "generate") {
      return {{"samples", c_.samples}, {"temperature", c_.temperature}, {"top_p", c_.topP}, {"max_new_tokens", c_.maxNewTokens}, {"seed", r.seed}};
    }
    return {{"backend", c_.backend}, {"trials", c_.trials}, {"seed", c_.evalSeed}, {"sizes", c_.sizes}, {"timer", c_.timer}};
  }

  StageWork work(const Stage& s) const {
    if (s.kind == "data") return {"synth", 1};
    if (s.kind == "init") return {};
    if (s.kind == "base" || s.kind == "train") {
      try {
        const std::string yaml = inputs(s)["train_yaml"].get<std::string>();
        return {"step", static_cast<double>(TrainConfig::parse(yaml, c_.source.string(), c_.source.parent_path()).maxSteps)};
      } catch (const std::exception&) {
        return {"step", -1};  // the stage itself will say what is wrong with its config
      }
    }
    const double problems = heldoutProblems();
    return {s.kind == "generate" ? "sample" : "candidate", problems < 0 ? -1 : problems * c_.samples};
  }

 private:
  // The baseline starts from scratch; objectives continue from the warm start when there is one.
  // Inputs name everything upstream (data, warm start), so a finished run cannot outlive a changed one.
  json trainInputs(const LoopRun& r) const {
    const LoopObjective sft{"untrained", YAML::Load("{type: sft}")};
    const LoopObjective* objective = &sft;
    for (const auto& o : c_.objectives) {
      if (o.name == r.objective) objective = &o;
    }
    const bool untrained = r.objective == "untrained";
    json in = {{"train_yaml", c_.trainYaml(*objective, r.seed, data_.trainData, untrained ? fs::path() : warmStart_)}, {"data", data_.inputs}};
    if (untrained) in["steps"] = 0;
    if (c_.base && !untrained) in["warm_start"] = c_.baseTrainYaml(data_.trainData);
    return in;
  }

  double heldoutProblems() const {
    if (!fs::exists(data_.heldoutDir)) return -1;  // not synthesised yet
    double n = 0;
    for (const auto& e : fs::recursive_directory_iterator(data_.heldoutDir)) n += e.path().filename() == "problem.yaml";
    return n;
  }

  const LoopConfig& c_;
  LoopData data_;
  fs::path baseDir_;
  fs::path warmStart_;
};

// One part alone (`--only`): the others may be running elsewhere at this moment, so its prerequisites
// must be finished, never started here.
void keepOnlyPart(LoopPlan& plan, const StageLedger& ledger, const std::string& only) {
  const bool shared = only == "shared";
  for (const auto& s : plan.stages) {
    if (!shared && !s.run && !ledger.done(s.id, plan.inputs(s))) {
      throw makeError("--only {}: stage {} has not finished; run `cuset loop --only shared` first (the first job of `cuset loop --slurm`)", only,
                      s.id);
    }
  }
  std::erase_if(plan.stages, [&](const Stage& s) { return shared ? s.run != nullptr : !s.run || s.run->name != only; });
}

TrainRunOptions trainRunOptions(const fs::path& outDir, const LoopRunOptions& options) {
  TrainRunOptions to;
  to.outDir = outDir;
  to.showProgress = options.showProgress;
  // An interrupted run continues from its last checkpoint; one that died before any checkpoint starts over.
  to.resume = fs::exists(to.outDir / "checkpoints" / "latest");
  if (!to.resume) fs::remove_all(to.outDir);
  return to;
}

// Trains in `dir`/train from the YAML this stage was planned with, kept beside it as `dir`/train.yaml.
void runTrainStage(const json& inputs, const fs::path& dir, const LoopRunOptions& options, std::optional<std::int64_t> maxSteps) {
  const std::string yaml = inputs["train_yaml"].get<std::string>();
  fs::create_directories(dir);
  writeFileAtomic(dir / "train.yaml", yaml);
  const TrainConfig tc = TrainConfig::parse(yaml, (dir / "train.yaml").string(), dir);
  TrainRunOptions to = trainRunOptions(dir / "train", options);
  to.maxSteps = maxSteps;
  runTraining(tc, to);
}

void runGenerateStage(const LoopConfig& c, const LoopPlan& plan, const LoopRun& r, const LoopRunOptions& options) {
  GenerateOptions g;
  // A pretrained model's baseline is the model folder itself; a random init is a 0-step training run.
  g.modelDir = r.objective == "untrained" && c.pretrained() ? pretrainedDir(c, plan.data().trainData)
               : r.objective == "base"                      ? plan.warmStart()
                                                            : r.dir / "train" / "final";
  g.problemsDir = plan.data().heldoutDir;
  g.outFile = r.dir / "candidates.jsonl";
  g.modelName = r.name;
  g.samples = c.samples;
  g.temperature = c.temperature;
  g.topP = c.topP;
  g.maxNewTokens = c.maxNewTokens;
  g.seed = r.seed;
  g.device = c.device;
  g.bf16 = c.bf16;
  g.threads = c.threads;
  g.showProgress = options.showProgress;
  runGeneration(g);
}

void runEvalStage(const LoopConfig& c, const LoopPlan& plan, const LoopRun& r, const LoopRunOptions& options) {
  EvalConfig e;
  e.problemsDir = plan.data().heldoutDir;
  e.candidatesPath = r.dir / "candidates.jsonl";
  e.outDir = r.dir / "eval";
  e.backend = *parseBackend(c.backend);
  e.trials = c.trials;
  e.seed = c.evalSeed;  // every run sees the same inputs, so runs differ only by their kernels
  e.sizeSet = c.sizes;
  e.cuda.timer = c.timer;
  e.cuda.maxSeconds = c.maxTimingSeconds;
  e.jobs = c.jobs;
  e.resume = fs::exists(e.outDir / "results.jsonl");
  e.showProgress = options.showProgress;
  e.commandLine = {"cuset", "loop", "--config", c.source.string()};
  runEvaluation(e);
  writeRunReports(ReportOptions{.runDir = e.outDir});
}

void runStage(const LoopConfig& c, const LoopPlan& plan, const Stage& s, const json& inputs, const LoopRunOptions& options) {
  if (s.kind == "data") {
    synth::runSynth(plan.data().synthOptions);
  } else if (s.kind == "base") {
    runTrainStage(inputs, plan.baseDir(), options, std::nullopt);
  } else if (s.kind == "train" || s.kind == "init") {
    runTrainStage(inputs, s.run->dir, options, s.run->objective == "untrained" ? std::optional<std::int64_t>(0) : std::nullopt);
  } else if (s.kind == "generate") {
    runGenerateStage(c, plan, *s.run, options);
  } else {
    runEvalStage(c, plan, *s.run, options);
  }
}

// Runs every unfinished stage in order, with progress and an ETA from the work of the finished ones.
void runStages(const LoopConfig& c, const LoopPlan& plan, const StageLedger& ledger, const LoopRunOptions& options, Clock::time_point start,
               LoopSummary& summary) {
  const auto& stages = plan.stages;
  WorkEta eta;
  for (const auto& s : stages) {
    if (const json inputs = plan.inputs(s); ledger.done(s.id, inputs)) {
      if (auto seconds = ledger.secondsOf(s.id)) eta.record(plan.work(s), *seconds);
    }
  }
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const Stage& s = stages[i];
    const json inputs = plan.inputs(s);
    if (ledger.done(s.id, inputs)) {
      ++summary.stagesSkipped;
      continue;
    }
    std::vector<StageWork> remaining;
    for (std::size_t j = i; j < stages.size(); ++j) remaining.push_back(plan.work(stages[j]));
    const std::string etaText = WorkEta::describe(eta.estimate(remaining));
    log::info("loop {}: stage {}/{} {} (elapsed {}{})", c.name, i + 1, stages.size(), s.id,
              formatDuration(std::chrono::duration<double>(Clock::now() - start).count()), etaText.empty() ? "" : ", " + etaText);
    if (ledger.startedWithOtherInputs(s.id, inputs)) {
      log::warn("loop {}: stage {} was interrupted under other settings; starting it over", c.name, s.id);
      if (s.kind == "base") fs::remove_all(plan.baseDir() / "train");
      if (s.kind == "train" || s.kind == "init") fs::remove_all(s.run->dir / "train");
      if (s.kind == "eval") fs::remove_all(s.run->dir / "eval");
    }
    ledger.start(s.id, inputs);
    const auto stageStart = Clock::now();
    runStage(c, plan, s, inputs, options);
    const double seconds = std::chrono::duration<double>(Clock::now() - stageStart).count();
    ledger.finish(s.id, inputs, seconds);
    eta.record(plan.work(s), seconds);
    ++summary.stagesRun;
  }
}

// The comparison's input, from whatever has finished.
LoopComparisonInput comparisonInput(const LoopConfig& c, const std::vector<LoopRun>& runs, const LoopPlan& plan) {
  LoopComparisonInput in;
  in.name = c.name;
  in.k = c.samples;
  const fs::path& heldoutDir = plan.data().heldoutDir;
  if (fs::exists(heldoutDir / "heldout.json")) {
    const json index = json::parse(readFile(heldoutDir / "heldout.json"));
    for (const auto& p : index["problems"]) in.problemSet[p["id"].get<std::string>()] = p["set"].get<std::string>();
  }
  if (c.baseline) in.objectives.push_back("untrained");
  if (c.base) in.objectives.push_back("base");
  for (const auto& o : c.objectives) in.objectives.push_back(o.name);
  for (const auto& r : runs) {
    LoopRunInput ri{.objective = r.objective, .seed = r.seed, .dir = fs::relative(r.dir, c.outDir).string()};
    if (fs::exists(c.outDir / "state" / (r.name + ".eval.done"))) {
      RunData data = loadRun(r.dir / "eval");
      ri.results = std::move(data.results);
      ri.evaluated = true;
    }
    if (r.objective == "base") {
      ri.loss = readLossCurve(plan.baseDir() / "train" / "metrics.jsonl");
    } else if (r.objective != "untrained") {
      ri.loss = readLossCurve(r.dir / "train" / "metrics.jsonl");
    }
    in.runs.push_back(std::move(ri));
  }
  in.info = {{"config", c.source.string()}, {"backend", c.backend},         {"eval_seed", c.evalSeed},
             {"samples", c.samples},        {"temperature", c.temperature}, {"data", plan.data().inputs}};
  const fs::path card = synth::SynthPaths::forOutput(plan.data().trainData).cardJson;
  if (fs::exists(card)) {
    const json j = json::parse(readFile(card));
    in.info["data_card"] = {
        {"samples", j.value("samples", 0)}, {"rejected", j.value("rejected", 0)}, {"heldout", j.value("heldout", json::object())}};
  }
  return in;
}

void writeComparison(const LoopConfig& c, const std::vector<LoopRun>& runs, const LoopPlan& plan, LoopSummary& summary) {
  const json comparison = computeLoopComparison(comparisonInput(c, runs, plan));
  const std::string md = renderLoopMarkdown(comparison);
  const ReportPages pages = writeReportPages(c.outDir, "comparison", comparison, md, renderLoopHtml(comparison));
  summary.reportJson = pages.json;
  summary.reportMarkdown = pages.markdown;
  summary.reportHtml = pages.html;
  summary.table = md.substr(0, md.find("\n## Runs"));
}

}  // namespace

LoopSummary runLoop(const LoopConfig& c, const LoopRunOptions& options) {
  const auto start = Clock::now();
  LoopSummary summary;
  summary.outDir = c.outDir;
  if (!options.planOnly) fs::create_directories(c.outDir);
  const StageLedger ledger(c.outDir / "state");
  const std::vector<LoopRun> runs = planLoopRuns(c);
  requireKnownPart(c, runs, options.only);
  LoopPlan plan(c, runs, loopData(c, options));
  if (options.planOnly) {
    for (const auto& s : plan.stages) {
      if (!ledger.done(s.id, plan.inputs(s))) summary.unfinished.push_back(s.id);
    }
    return summary;
  }
  if (!options.only.empty()) keepOnlyPart(plan, ledger, options.only);
  if (!options.reportOnly) runStages(c, plan, ledger, options, start, summary);
  if (options.only.empty()) writeComparison(c, runs, plan, summary);  // a part alone writes none: the others may still run
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace cuset
