// `cuset import kernelbench KB_ROOT --out DIR`
#include <fmt/format.h>

#include <cstdint>
#include <sstream>

#include "commands.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_import.hpp"

namespace cuset::cli {

void registerImportCommand(CLI::App& app, CommandContext& context) {
  CLI::App* import = app.add_subcommand("import", "Import an external problem suite");
  import->require_subcommand(1);
  auto options = std::make_shared<KernelBenchImportOptions>();
  auto levels = std::make_shared<std::string>("1,2,3");
  CLI::App* kb =
      import->add_subcommand("kernelbench", "KernelBench's problem files -> a problem suite with TorchScript references (Python at import only)");
  kb->add_option("KB_ROOT", options->root, "KernelBench checkout (holds KernelBench/level1/...)")->required()->check(CLI::ExistingDirectory);
  kb->add_option("--out", options->outDir, "Suite folder to write (DIR/levelN/<name>/, DIR/import-report.json)")->required();
  kb->add_option("--levels", *levels, "Comma-separated levels")->capture_default_str();
  kb->add_option("--only", options->only, "Re-import only these (level1/19, 19_ReLU or level1/19_ReLU.py)");
  kb->add_option("--jobs", options->jobs, "Files traced in parallel (default: hardware threads)");
  kb->add_option("--python", options->python, "Python with torch 2.x (default: $CUSET_PYTHON, else the build's: the checkout's .venv)");
  kb->add_option("--commit", options->commit, "KernelBench commit to record (default: from KB_ROOT)");
  kb->add_option("--trace-memory-gib", options->traceMemoryGiB,
                 "Largest real full-size run or trace (a model TorchScript cannot script, or one that cannot run on meta tensors)")
      ->capture_default_str();
  kb->add_option("--small-max-mib", options->smallMaxMiB, "The simulator's size set: most MiB of inputs, parameters and outputs")
      ->capture_default_str();
  kb->add_option("--small-max-gflop", options->smallMaxGflop, "The simulator's size set: most GFLOP per forward")->capture_default_str();
  kb->add_option("--medium-max-mib", options->mediumMaxMiB, "The CPU-verified `medium` set (when no small one fits): most MiB")
      ->capture_default_str();
  kb->add_option("--medium-max-gflop", options->mediumMaxGflop, "The CPU-verified `medium` set: most GFLOP per forward")->capture_default_str();
  kb->add_flag(
      "--quiet", [options](std::int64_t) { options->progress = false; }, "No progress bar");
  kb->callback([options, levels, &context] {
    options->levels.clear();
    std::stringstream list(*levels);
    for (std::string item; std::getline(list, item, ',');) {
      if (item.empty()) continue;
      try {
        options->levels.push_back(std::stoi(item));
      } catch (const std::exception&) {
        throw CLI::ValidationError("--levels", fmt::format("'{}' is not a level number", item));
      }
    }
    const KernelBenchImportReport report = importKernelBench(*options);
    const ImportCounts all = importCountsPerLevel(report)["all"];
    fmt::print("imported {} of {} KernelBench problems into {} (commit {}): {} flagged defective, {} without a simulator size set; report: {}\n",
               report.imported(), report.problems.size(), options->outDir.string(), report.commit, all.flagged, all.gpuOnly,
               (options->outDir / "import-report.md").string());
    context.exitCode = report.imported() == 0 ? 1 : 0;
  });
}

}  // namespace cuset::cli
