#pragma once
#include <optional>
// `cuset eval --kernelbench KB_ROOT`: the problems a KernelBench run folder names, imported from the
// user's own checkout on first use into a cache folder and reused by every later run.
#include <filesystem>
#include <set>
#include <string>
#include <utility>

namespace cuset {

struct KernelBenchSuiteCacheOptions {
  std::filesystem::path root;            // the KernelBench checkout (KernelBench/level{N}/<id>_<name>.py)
  std::filesystem::path cacheRoot;       // the run's cache folder; the suite lives in <cacheRoot>/kernelbench-suites/<checkout hash>
  std::set<std::pair<int, int>> needed;  // (level, number) of every problem the run names
  bool progress = true;
};

// Imports what the cached suite lacks (a problem never imported, or one whose KernelBench file changed
// since) and returns the suite folder. A problem the checkout does not have stays out of the suite: its
// candidates say so. Throws cuset::Error for a root that is not a KernelBench checkout.
std::filesystem::path kernelBenchSuiteOnFirstUse(const KernelBenchSuiteCacheOptions& options);

// KernelBench's float32 tolerance as the checkout at `root` defines it: 1e-4 where its eval.py
// (src/kernelbench/eval.py, or src/eval.py before the package layout) has get_tolerance_for_precision,
// 1e-2 where it still compares with atol=rtol=1e-02 (v0, v0.1); nullopt without an eval.py to read.
std::optional<double> kernelBenchFloat32Tolerance(const std::filesystem::path& root);

}  // namespace cuset
