// `cuset report RUN_DIR [--compare BASE_DIR] [--fail-on-regression]`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/reports/report_writer.hpp"
#include <cstdint>

namespace cuset::cli {

void registerReportCommand(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<ReportOptions>();
  auto compare = std::make_shared<std::string>();
  auto failOnRegression = std::make_shared<bool>(false);
  CLI::App* report = app.add_subcommand("report", "Write summary.json, summary.md, junit.xml and report.html for a run folder");
  report->add_option("run_dir", options->runDir, "Run folder written by `cuset eval` (holds results.jsonl)")->required();
  report->add_option("--compare", *compare, "Base run folder: mark each problem better / worse / same / ambiguous against it");
  report->add_flag("--fail-on-regression", *failOnRegression, "Exit 3 when the comparison finds a correctness loss or a significant slowdown")
      ->needs(report->get_option("--compare"));
  report->add_option("--assets", options->assetsDir, "Folder with report-assets.js/.css to inline (default: the build's copy)");
  auto includeDefective = std::make_shared<std::optional<bool>>();
  report->add_flag_function(
      "--include-defective,!--exclude-defective", [includeDefective](std::int64_t n) { *includeDefective = n > 0; },
      "Count problems flagged defective (KernelBench's degenerate or stochastic references) in the metrics (default: as the run said, else no)");
  report->callback([=, &context] {
    if (!compare->empty()) options->compareDir = *compare;
    options->includeDefective = *includeDefective;
    const ReportOutcome out = writeRunReports(*options);
    for (const auto& path : out.written) fmt::print("wrote {}\n", path.string());
    if (!out.assetsInlined) fmt::print("note: report assets not found; report.html shows source without syntax highlighting\n");
    if (out.summary.contains("comparison")) {
      const auto& c = out.summary["comparison"]["counts"];
      fmt::print("compared with {}: worse {}, ambiguous {}, better {}, same {}, new {}, missing {}\n", *compare, c["worse"].get<int>(),
                 c["ambiguous"].get<int>(), c["better"].get<int>(), c["same"].get<int>(), c["new"].get<int>(), c["missing"].get<int>());
    }
    context.exitCode = (*failOnRegression && out.regression) ? 3 : 0;
  });
}

}  // namespace cuset::cli
