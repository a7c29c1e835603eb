#include "cuset/loop/loop_runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cuset/common/json_util.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/pipeline/eval_pipeline.hpp"
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

LoopSummary runLoop(const LoopConfig& c, const LoopRunOptions& options) {
  const auto start = Clock::now();
  LoopSummary summary;
  summary.outDir = c.outDir;
  if (!options.planOnly) fs::create_directories(c.outDir);
  const StageLedger ledger(c.outDir / "state");
  const std::vector<LoopRun> runs = planLoopRuns(c);
  if (!options.only.empty() && options.only != "shared" &&
      std::none_of(runs.begin(), runs.end(), [&](const LoopRun& r) { return r.name == options.only; })) {
    std::vector<std::string> names = {"shared"};
    for (const auto& r : runs) names.push_back(r.name);
    throw makeError("--only {}: {} has no such part; its parts are: {}", options.only, c.source.string(), fmt::join(names, ", "));
  }

  // Data.
  fs::path trainData = c.trainData;
  fs::path heldoutDir = c.heldoutDir;
  json dataInputs;
  synth::SynthOptions synthOptions;
  if (c.synth) {
    synthOptions = *c.synth;
    synthOptions.out = c.outDir / "data" / "train.jsonl";
    synthOptions.showProgress = options.showProgress;
    const auto paths = synth::SynthPaths::forOutput(synthOptions.out);
    trainData = paths.train;
    heldoutDir = paths.heldoutDir;
    dataInputs = {{"per_family", synthOptions.perFamily}, {"seed", synthOptions.seed}, {"families", synthOptions.families},
                  {"heldout_families", synthOptions.heldoutFamilies}, {"heldout_fraction", synthOptions.heldoutVariantFraction},
                  {"heldout_instances", synthOptions.heldoutInstances}, {"heldout_variants", synthOptions.heldoutVariants}, {"heldout_per_family", synthOptions.heldoutPerFamily},
                  {"trials", synthOptions.trials}};
  } else {
    dataInputs = {{"train", fs::absolute(trainData).string()}, {"heldout", fs::absolute(heldoutDir).string()}};
  }

  // Stage list: data, then train / generate / eval per run.
  struct Stage {
    std::string id;
    std::string kind;
    const LoopRun* run = nullptr;
  };
  std::vector<Stage> stages;
  if (c.synth) stages.push_back({"data", "data", nullptr});
  if (c.base) stages.push_back({"base.train", "base", nullptr});
  const fs::path baseDir = c.outDir / "base";
  const fs::path warmStart = c.base ? baseDir / "train" / "final" : fs::path();
  for (const auto& r : runs) {
    // The baseline's "training" is 0 steps (random init + tokenizer): its own kind, so it does not skew the ETA.
    const bool trains = !(r.objective == "untrained" && c.pretrained()) && r.objective != "base";
    if (trains) stages.push_back({r.name + ".train", r.objective == "untrained" ? "init" : "train", &r});
    stages.push_back({r.name + ".generate", "generate", &r});
    stages.push_back({r.name + ".eval", "eval", &r});
  }

  auto stageInputs = [&](const Stage& s) -> json {
    if (s.kind == "data") return dataInputs;
    if (s.kind == "base") return {{"train_yaml", c.baseTrainYaml(trainData)}, {"data", dataInputs}};
    const LoopRun& r = *s.run;
    if (s.kind == "train" || s.kind == "init") {
      const LoopObjective sft{"untrained", YAML::Load("{type: sft}")};
      const LoopObjective* objective = &sft;
      for (const auto& o : c.objectives) {
        if (o.name == r.objective) objective = &o;
      }
      // The baseline starts from scratch; objectives continue from the warm start when there is one.
      // Inputs name everything upstream (data, warm start), so a finished run cannot outlive a changed one.
      json in = {{"train_yaml", c.trainYaml(*objective, r.seed, trainData, r.objective == "untrained" ? fs::path() : warmStart)}, {"data", dataInputs}};
      if (r.objective == "untrained") in["steps"] = 0;
      if (c.base && r.objective != "untrained") in["warm_start"] = c.baseTrainYaml(trainData);
      return in;
    }
    if (s.kind == "generate") {
      return {{"samples", c.samples}, {"temperature", c.temperature}, {"top_p", c.topP}, {"max_new_tokens", c.maxNewTokens}, {"seed", r.seed}};
    }
    return {{"backend", c.backend}, {"trials", c.trials}, {"seed", c.evalSeed}, {"sizes", c.sizes}, {"timer", c.timer}};
  };

  // The work each stage consumes, for the ETA: training steps, samples, candidates.
  auto heldoutProblems = [&]() -> double {
    if (!fs::exists(heldoutDir)) return -1;  // not synthesised yet
    double n = 0;
    for (const auto& e : fs::recursive_directory_iterator(heldoutDir)) n += e.path().filename() == "problem.yaml";
    return n;
  };
  auto workOf = [&](const Stage& s, const json& inputs) -> StageWork {
    if (s.kind == "data") return {"synth", 1};
    if (s.kind == "init") return {};
    if (s.kind == "base" || s.kind == "train") {
      try {
        const std::string yaml = inputs["train_yaml"].get<std::string>();
        return {"step", static_cast<double>(TrainConfig::parse(yaml, c.source.string(), c.source.parent_path()).maxSteps)};
      } catch (const std::exception&) {
        return {"step", -1};  // the stage itself will say what is wrong with its config
      }
    }
    const double problems = heldoutProblems();
    return {s.kind == "generate" ? "sample" : "candidate", problems < 0 ? -1 : problems * c.samples};
  };
  if (options.planOnly) {
    for (const auto& s : stages) {
      if (!ledger.done(s.id, stageInputs(s))) summary.unfinished.push_back(s.id);
    }
    return summary;
  }
  if (!options.only.empty()) {
    // One part alone: the others may be running elsewhere at this moment, so its prerequisites must be
    // finished, never started here.
    const bool shared = options.only == "shared";
    for (const auto& s : stages) {
      if (!shared && !s.run && !ledger.done(s.id, stageInputs(s))) {
        throw makeError("--only {}: stage {} has not finished; run `cuset loop --only shared` first (the first job of `cuset loop --slurm`)",
                        options.only, s.id);
      }
    }
    std::erase_if(stages, [&](const Stage& s) { return shared ? s.run != nullptr : !s.run || s.run->name != options.only; });
  }
  WorkEta eta;
  for (const auto& s : stages) {
    if (const json inputs = stageInputs(s); !options.reportOnly && ledger.done(s.id, inputs)) {
      if (auto seconds = ledger.secondsOf(s.id)) eta.record(workOf(s, inputs), *seconds);
    }
  }
  const std::size_t total = stages.size();
  for (std::size_t i = 0; i < stages.size() && !options.reportOnly; ++i) {
    const Stage& s = stages[i];
    const json inputs = stageInputs(s);
    if (ledger.done(s.id, inputs)) {
      ++summary.stagesSkipped;
      continue;
    }
    std::vector<StageWork> remaining;
    for (std::size_t j = i; j < stages.size(); ++j) remaining.push_back(workOf(stages[j], stageInputs(stages[j])));
    const std::string etaText = WorkEta::describe(eta.estimate(remaining));
    log::info("loop {}: stage {}/{} {} (elapsed {}{})", c.name, i + 1, total, s.id, formatDuration(std::chrono::duration<double>(Clock::now() - start).count()),
              etaText.empty() ? "" : ", " + etaText);
    if (ledger.startedWithOtherInputs(s.id, inputs)) {
      log::warn("loop {}: stage {} was interrupted under other settings; starting it over", c.name, s.id);
      if (s.kind == "base") fs::remove_all(baseDir / "train");
      if (s.kind == "train" || s.kind == "init") fs::remove_all(s.run->dir / "train");
      if (s.kind == "eval") fs::remove_all(s.run->dir / "eval");
    }
    ledger.start(s.id, inputs);
    const auto stageStart = Clock::now();
    if (s.kind == "data") {
      synth::runSynth(synthOptions);
    } else if (s.kind == "base") {
      const std::string yaml = inputs["train_yaml"].get<std::string>();
      fs::create_directories(baseDir);
      writeFileAtomic(baseDir / "train.yaml", yaml);
      TrainRunOptions to;
      to.outDir = baseDir / "train";
      to.showProgress = options.showProgress;
      to.resume = fs::exists(to.outDir / "checkpoints" / "latest");
      if (!to.resume) fs::remove_all(to.outDir);
      runTraining(TrainConfig::parse(yaml, (baseDir / "train.yaml").string(), baseDir), to);
    } else if (s.kind == "train" || s.kind == "init") {
      const LoopRun& r = *s.run;
      const std::string yaml = inputs["train_yaml"].get<std::string>();
      fs::create_directories(r.dir);
      writeFileAtomic(r.dir / "train.yaml", yaml);
      const TrainConfig tc = TrainConfig::parse(yaml, (r.dir / "train.yaml").string(), r.dir);
      TrainRunOptions to;
      to.outDir = r.dir / "train";
      to.showProgress = options.showProgress;
      if (r.objective == "untrained") to.maxSteps = 0;
      // An interrupted run continues from its last checkpoint; one that died before any checkpoint starts over.
      const bool hasCheckpoint = fs::exists(to.outDir / "checkpoints" / "latest");
      if (!hasCheckpoint) fs::remove_all(to.outDir);
      to.resume = hasCheckpoint;
      runTraining(tc, to);
    } else if (s.kind == "generate") {
      const LoopRun& r = *s.run;
      GenerateOptions g;
      // A pretrained model's baseline is the model folder itself; a random init is a 0-step training run.
      g.modelDir = r.objective == "untrained" && c.pretrained() ? pretrainedDir(c, trainData)
                   : r.objective == "base"                     ? warmStart
                                                               : r.dir / "train" / "final";
      g.problemsDir = heldoutDir;
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
    } else {
      const LoopRun& r = *s.run;
      EvalConfig e;
      e.problemsDir = heldoutDir;
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
    const double seconds = std::chrono::duration<double>(Clock::now() - stageStart).count();
    ledger.finish(s.id, inputs, seconds);
    eta.record(workOf(s, inputs), seconds);
    ++summary.stagesRun;
  }

  if (!options.only.empty()) {
    summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return summary;
  }
  // The comparison, from whatever has finished.
  LoopComparisonInput in;
  in.name = c.name;
  in.k = c.samples;
  if (fs::exists(heldoutDir / "heldout.json")) {
    const json index = json::parse(readFile(heldoutDir / "heldout.json"));
    for (const auto& p : index["problems"]) in.problemSet[p["id"].get<std::string>()] = p["set"].get<std::string>();
  }
  if (c.baseline) in.objectives.push_back("untrained");
  if (c.base) in.objectives.push_back("base");
  for (const auto& o : c.objectives) in.objectives.push_back(o.name);
  for (const auto& r : runs) {
    LoopRunInput ri{r.objective, r.seed, fs::relative(r.dir, c.outDir).string(), false, {}, {}};
    if (fs::exists(c.outDir / "state" / (r.name + ".eval.done"))) {
      RunData data = loadRun(r.dir / "eval");
      ri.results = std::move(data.results);
      ri.evaluated = true;
    }
    if (r.objective == "base") {
      ri.loss = readLossCurve(baseDir / "train" / "metrics.jsonl");
    } else if (r.objective != "untrained") {
      ri.loss = readLossCurve(r.dir / "train" / "metrics.jsonl");
    }
    in.runs.push_back(std::move(ri));
  }
  in.info = {{"config", c.source.string()}, {"backend", c.backend}, {"eval_seed", c.evalSeed}, {"samples", c.samples},
             {"temperature", c.temperature}, {"data", dataInputs}};
  const fs::path card = synth::SynthPaths::forOutput(trainData).cardJson;
  if (fs::exists(card)) {
    const json j = json::parse(readFile(card));
    in.info["data_card"] = {{"samples", j.value("samples", 0)}, {"rejected", j.value("rejected", 0)}, {"heldout", j.value("heldout", json::object())}};
  }
  const json comparison = computeLoopComparison(in);
  const std::string md = renderLoopMarkdown(comparison);
  const ReportPages pages = writeReportPages(c.outDir, "comparison", comparison, md, renderLoopHtml(comparison));
  summary.reportJson = pages.json;
  summary.reportMarkdown = pages.markdown;
  summary.reportHtml = pages.html;
  summary.table = md.substr(0, md.find("\n## Runs"));
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace cuset
