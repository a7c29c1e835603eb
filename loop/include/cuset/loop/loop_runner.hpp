#pragma once
// `cuset loop`: data -> (per objective and seed) train -> generate -> evaluate -> one comparison report.
// Every stage leaves a marker when it finishes; a loop started again skips finished stages and resumes
// the interrupted one (training from its last checkpoint, evaluation from its last result).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/loop/loop_config.hpp"

namespace cuset {

struct LoopRunOptions {
  bool showProgress = true;
  bool reportOnly = false;  // rebuild the comparison from what is finished, run nothing
  // One part of the loop, for running parts as separate jobs (`cuset loop --slurm`): "shared" (the
  // data and the warm start) or one run's name ("sft-s1"), whose stages need the shared ones finished.
  // No comparison is written; empty runs everything.
  std::string only;
  bool planOnly = false;  // run nothing, write nothing: list the unfinished stages
};

struct LoopSummary {
  std::filesystem::path outDir;
  std::filesystem::path reportHtml;
  std::filesystem::path reportMarkdown;
  std::filesystem::path reportJson;
  std::size_t stagesRun = 0;
  std::size_t stagesSkipped = 0;
  double seconds = 0.0;
  std::string table;                    // the Markdown objectives table, for the terminal
  std::vector<std::string> unfinished;  // with planOnly: the stage ids not finished ("data", "sft-s1.train", ...)
};

// One (objective, seed) run of a loop, and where its stages write.
struct LoopRun {
  std::string objective;  // "untrained" for the baseline
  std::uint64_t seed = 0;
  std::string name;  // "sft-s1"
  std::filesystem::path dir;
};

std::vector<LoopRun> planLoopRuns(const LoopConfig& config);
LoopSummary runLoop(const LoopConfig& config, const LoopRunOptions& options);

}  // namespace cuset
