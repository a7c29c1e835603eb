// `cuset merge RUN_DIR... --out DIR`: the shards of one evaluation as one run folder, with its reports.
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/evaluator/pipeline/run_merge.hpp"
#include "cuset/reports/report_writer.hpp"

namespace cuset::cli {

void registerMergeCommand(CLI::App& app, CommandContext& context) {
  auto runs = std::make_shared<std::vector<std::filesystem::path>>();
  auto out = std::make_shared<std::filesystem::path>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge the shard runs of one `cuset eval --shard I/N` evaluation into one run folder");
  cmd->add_option("runs", *runs, "The shard run folders (all N of them)")->required();
  cmd->add_option("--out", *out, "Run folder to write (results.jsonl, run.json and the reports)")->required();
  cmd->callback([=, &context] {
    const MergeSummary s = mergeRuns(*runs, *out);
    writeRunReports(ReportOptions{.runDir = *out});
    fmt::print("merged {} shards, {} candidates -> {}\n", s.shards, s.candidates, (*out / "report.html").string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
