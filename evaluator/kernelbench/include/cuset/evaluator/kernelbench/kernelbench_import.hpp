#pragma once
// `cuset import kernelbench KB_ROOT --out DIR`: each KernelBench problem file becomes a CuSeT problem
// (docs/kernelbench.md) whose reference is a TorchScript archive, whose parameters and buffers are
// inputs drawn fresh every trial, with a `small` size set for the simulator and KernelBench's own sizes
// as `full` (a network no simulator-sized set fits gets a CPU-sized `medium`, or `full` alone: the
// simulator answers `unsupported` for it). Problems whose reference KernelBench ships degenerate or
// stochastic are imported flagged (`defect:`). A Python child process (evaluator/kernelbench/python/cuset_kernelbench.py trace) traces one file;
// this side writes problem.yaml, runs `cuset problems check` on it, and keeps the import report.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset {

struct KernelBenchImportOptions {
  std::filesystem::path root;    // holds KernelBench/level{N}/<id>_<name>.py
  std::filesystem::path outDir;  // the suite: DIR/level{N}/<name>/, DIR/import-report.{json,md}
  std::vector<int> levels{1, 2, 3};
  std::vector<std::string> only;  // "level1/19", "19_ReLU", "level1/19_ReLU.py": re-import just these
  std::size_t jobs = 0;           // 0: hardware threads
  std::string python;             // empty: pythonWithTorch() ($CUSET_PYTHON, else the build's)
  std::string commit;             // empty: from KB_ROOT's git checkout or README
  double traceMemoryGiB = 4.0;    // the most a real (non-meta) run or trace at the full size may allocate
  // The scaled-down size sets' bounds (inputs + parameters + outputs, forward flops): `small` is the
  // simulator's; `medium` is what the CPU verifies a network on when no small set fits.
  double smallMaxMiB = 4.0, smallMaxGflop = 0.3;
  double mediumMaxMiB = 1024.0, mediumMaxGflop = 50.0;
  std::chrono::seconds timeoutPerFile{900};
  bool progress = true;
};

struct ImportedProblem {
  std::string source;  // "level1/19_ReLU.py"
  std::string status;  // "imported" | "skipped"
  std::string reason;  // why skipped, or notes on an imported one
  std::string id;      // "level1/kb19_relu" when imported
  double seconds = 0.0;
  nlohmann::json details;  // scaling, verification, reference kind, size_sets, defect {kind, reason}
  // Skipped for a reason outside the file: the tracer was killed, ran past its time, or ended without a
  // result. Such a file is imported again next time, never remembered as failing.
  bool transient = false;
  std::string defect() const;  // the flagged defect's kind, or empty
  bool simulable() const;      // imported with a `small` size set
};

struct KernelBenchImportReport {
  std::string commit;
  std::string root;                       // the KernelBench checkout imported from (absolute): where its prompt templates are
  std::vector<ImportedProblem> problems;  // sorted by level, then KernelBench number
  std::size_t imported() const;
};

// Per level ("level1", ..., "all"): files, imported, of those flagged defective and without a small
// (simulator) size set, and skipped.
struct ImportCounts {
  std::size_t files = 0, imported = 0, flagged = 0, gpuOnly = 0, skipped = 0;
};
std::map<std::string, ImportCounts> importCountsPerLevel(const KernelBenchImportReport& report);

// Throws cuset::Error for a root without KernelBench/level{N} folders or an unusable Python; a file
// that cannot be imported is a `skipped` entry with its reason, never an exception.
KernelBenchImportReport importKernelBench(const KernelBenchImportOptions& options);

// A KernelBench problem file of a checkout.
struct KernelBenchSourceFile {
  int level = 0;
  int number = 0;  // the number before the file name's first '_'
  std::filesystem::path path;
  std::string relative;  // "level1/19_ReLU.py"
  std::string name;      // "kb19_relu"
};

// The checkout's problem files of `levels` (KB_ROOT/KernelBench/level{N}/<number>_<name>.py), by level
// then number. Throws cuset::Error when none of the level folders exists.
std::vector<KernelBenchSourceFile> listKernelBenchSources(const std::filesystem::path& root, const std::vector<int>& levels);

// The problem folder name for a KernelBench file: "19_ReLU.py" -> "kb19_relu".
std::string kernelBenchProblemName(const std::string& fileName);

nlohmann::json importReportJson(const KernelBenchImportReport& report);
KernelBenchImportReport importReportFromJson(const nlohmann::json& json, const std::string& source);
std::string importReportMarkdown(const KernelBenchImportReport& report);

}  // namespace cuset
