#include "cuset/loop/slurm_loop.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/loop/loop_runner.hpp"
#include "slurm_script.hpp"
#include "cuset/common/resources.hpp"

namespace fs = std::filesystem;

namespace cuset {

SlurmLoopSubmission submitSlurmLoop(const LoopConfig& config, const SlurmLoopOptions& o) {
  const fs::path slurmDir = fs::absolute(config.outDir) / "slurm";
  const fs::path workDir = o.workDir.empty() ? fs::current_path() : fs::absolute(o.workDir);
  const std::string binary = shellQuote((o.cuset.empty() ? executablePath() : fs::absolute(o.cuset)).string());
  const std::string loop = binary + " loop " + quoteAll(o.loopArgs);

  // What is left, from the stage markers (a changed setting is the same error a local loop gives).
  const LoopSummary plan = runLoop(config, LoopRunOptions{.showProgress = false, .planOnly = true});
  SlurmLoopSubmission s;
  const std::vector<LoopRun> runs = planLoopRuns(config);
  std::vector<std::size_t> indices;  // 1-based, into the script's RUNS
  for (const auto& id : plan.unfinished) {
    if (id == "data" || id == "base.train") s.shared = true;
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string prefix = runs[i].name + ".";
    if (std::any_of(plan.unfinished.begin(), plan.unfinished.end(), [&](const std::string& id) { return id.starts_with(prefix); })) {
      indices.push_back(i + 1);
      s.runs.push_back(runs[i].name);
    }
  }
  s.finished = plan.unfinished.empty() && fs::exists(config.outDir / "comparison.json");

  const std::string gpus = o.gpusPerTask > 0 ? fmt::format("#SBATCH --gpus-per-task={}\n", o.gpusPerTask) : "";
  const std::string shared =
      sbatchHeader("cuset-loop-shared", slurmDir / "shared.log", o.partition, o.timeLimit, workDir) + gpus +
      fmt::format("set -euo pipefail\n# The data and the warm start, which every run needs.\nexec {} --only shared --quiet\n", loop);
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(r.name);
  const std::string array = sbatchHeader("cuset-loop-run", slurmDir / "run-%a.log", o.partition, o.timeLimit, workDir) + gpus +
                            fmt::format(
                                "set -euo pipefail\n# One (objective, seed) run per array task: train, generate, evaluate; resumable.\nRUNS=({})\n"
                                "exec {} --only \"${{RUNS[$((SLURM_ARRAY_TASK_ID - 1))]}}\" --quiet\n",
                                quoteAll(names), loop);
  const std::string report = sbatchHeader("cuset-loop-report", slurmDir / "report.log", o.partition, o.timeLimit, workDir) +
                             fmt::format("set -euo pipefail\n# The comparison of whatever finished.\nexec {} --report-only --quiet\n", loop);

  const std::string indexList = fmt::format("{}", fmt::join(indices, ","));
  s.text = fmt::format("# {}\n{}\n# {}\n{}\n# {}\n{}\n", (slurmDir / "shared.sbatch").string(), shared, (slurmDir / "runs.sbatch").string(), array,
                       (slurmDir / "report.sbatch").string(), report);
  if (s.finished) return s;

  if (!o.dryRun) {
    fs::create_directories(slurmDir);
    writeJobScript(slurmDir / "shared.sbatch", shared);
    writeJobScript(slurmDir / "runs.sbatch", array);
    writeJobScript(slurmDir / "report.sbatch", report);
  }
  SbatchSequence jobs(o.dryRun);
  std::string sharedJob, runsJob;
  if (s.shared) sharedJob = jobs.submit({(slurmDir / "shared.sbatch").string()}, "<shared job>");
  if (!s.runs.empty()) {
    std::vector<std::string> args = {"--array=" + indexList};
    // A failed shared job leaves nothing to train on: the array is cancelled rather than left pending.
    if (!sharedJob.empty()) args.insert(args.end(), {"--dependency=afterok:" + sharedJob, "--kill-on-invalid-dep=yes"});
    args.push_back((slurmDir / "runs.sbatch").string());
    runsJob = jobs.submit(args, "<array job>");
  }
  std::vector<std::string> args;
  const std::string after = !runsJob.empty() ? runsJob : sharedJob;
  if (!after.empty()) args.push_back("--dependency=afterany:" + after);
  args.push_back((slurmDir / "report.sbatch").string());
  const std::string reportJob = jobs.submit(args, "<report job>");
  s.text += jobs.commands();
  if (!o.dryRun) {
    s.sharedJob = sharedJob;
    s.runsJob = runsJob;
    s.reportJob = reportJob;
  }
  return s;
}

}  // namespace cuset
