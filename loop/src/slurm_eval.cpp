#include "cuset/loop/slurm_eval.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <cstdint>
#include <random>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/resources.hpp"
#include "slurm_script.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

bool shardFinished(const fs::path& dir) {
  try {
    return fs::exists(dir / "run.json") && readJsonFile(dir / "run.json").value("status", "") == "finished";
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

SlurmSubmission submitSlurmEval(const SlurmEvalOptions& o) {
  if (o.shards < 1 || o.shards > 10000) throw makeError("--shards {}: expected 1 to 10000", o.shards);
  for (const auto& a : o.evalArgs) {
    for (const char* own : {"--out", "--shard", "--seed", "--resume"}) {
      if (a == own || a.starts_with(std::string(own) + "=")) throw makeError("{}: set by `cuset slurm eval` itself, not passed to `cuset eval`", own);
    }
  }
  const fs::path out = fs::absolute(o.outDir);
  const fs::path slurmDir = out / "slurm";
  const fs::path workDir = o.workDir.empty() ? fs::current_path() : fs::absolute(o.workDir);
  const fs::path binary = o.cuset.empty() ? executablePath() : fs::absolute(o.cuset);

  // The plan: a rerun keeps its seed and must keep its arguments.
  json plan = {{"shards", o.shards}, {"eval_args", o.evalArgs}};
  const fs::path planFile = slurmDir / "plan.json";
  std::uint64_t seed = o.seed.value_or(0);
  if (fs::exists(planFile)) {
    const json before = readJsonFile(planFile);
    if (before.value("shards", json()) != plan["shards"] || before.value("eval_args", json()) != plan["eval_args"]) {
      throw makeError("{}: this run was planned with other arguments ({} shards: {}); use another --out for a new evaluation", planFile.string(),
                      before.value("shards", 0), dumpJson(before.value("eval_args", json::array())));
    }
    const auto recorded = std::stoull(before.at("seed").get<std::string>());
    if (o.seed && *o.seed != recorded) throw makeError("{}: planned with seed {}, not {}", planFile.string(), recorded, *o.seed);
    seed = recorded;
  } else if (!o.seed) {
    seed = std::uint64_t{std::random_device{}()} << 32 | std::random_device{}();
  }
  plan["seed"] = std::to_string(seed);

  SlurmSubmission s;
  std::vector<fs::path> shardDirs;
  for (std::size_t i = 1; i <= o.shards; ++i) {
    shardDirs.push_back(out / "shards" / std::to_string(i));
    if (!shardFinished(shardDirs.back())) s.shards.push_back(i);
  }
  s.alreadyMerged = s.shards.empty() && shardFinished(out / "merged");

  std::string eval = sbatchHeader("cuset-eval", slurmDir / "shard-%a.log", o.partition, o.timeLimit, workDir);
  if (o.gpusPerTask > 0) eval += fmt::format("#SBATCH --gpus-per-task={}\n", o.gpusPerTask);
  eval += fmt::format(
      "set -euo pipefail\n# Shard ${{SLURM_ARRAY_TASK_ID}} of {0}; --resume continues a shard a failed or preempted task left.\n"
      "exec {1} eval {2} --seed {3} --shard \"${{SLURM_ARRAY_TASK_ID}}/{0}\" --out {4}/\"${{SLURM_ARRAY_TASK_ID}}\" --resume --quiet\n",
      o.shards, shellQuote(binary.string()), quoteAll(o.evalArgs), seed, shellQuote((out / "shards").string()));
  std::vector<std::string> shardArgs;
  for (const auto& d : shardDirs) shardArgs.push_back(d.string());
  std::string merge = sbatchHeader("cuset-merge", slurmDir / "merge.log", o.partition, o.timeLimit, workDir);
  merge += fmt::format("set -euo pipefail\nexec {} merge {} --out {}\n", shellQuote(binary.string()), quoteAll(shardArgs),
                       shellQuote((out / "merged").string()));

  const std::string array = fmt::format("{}", fmt::join(s.shards, ","));
  s.text = fmt::format("# {}\n{}\n# {}\n{}\n", (slurmDir / "eval.sbatch").string(), eval, (slurmDir / "merge.sbatch").string(), merge);
  if (s.alreadyMerged) return s;

  if (!o.dryRun) {
    fs::create_directories(slurmDir);
    writeJsonFileAtomic(planFile, plan);
    writeJobScript(slurmDir / "eval.sbatch", eval);
    writeJobScript(slurmDir / "merge.sbatch", merge);
  }
  SbatchSequence jobs(o.dryRun);
  std::string arrayJob;
  if (!s.shards.empty()) arrayJob = jobs.submit({"--array=" + array, (slurmDir / "eval.sbatch").string()}, "<array job>");
  // afterany: the merge runs however the shards end; it refuses, naming the shard, if one did not finish.
  std::vector<std::string> mergeArgs;
  if (!arrayJob.empty()) mergeArgs.push_back("--dependency=afterany:" + arrayJob);
  mergeArgs.push_back((slurmDir / "merge.sbatch").string());
  const std::string mergeJob = jobs.submit(mergeArgs, "<merge job>");
  s.text += jobs.commands();
  if (!o.dryRun) {
    s.arrayJob = arrayJob;
    s.mergeJob = mergeJob;
  }
  return s;
}

}  // namespace cuset
