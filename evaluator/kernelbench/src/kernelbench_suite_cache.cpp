#include "cuset/evaluator/kernelbench/kernelbench_suite_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_import.hpp"

namespace fs = std::filesystem;

namespace cuset {
fs::path kernelBenchSuiteOnFirstUse(const KernelBenchSuiteCacheOptions& options) {
  if (!fs::is_directory(options.root / "KernelBench")) {
    throw makeError("--kernelbench {}: not a KernelBench checkout (no KernelBench/level{{N}} folders in it)", options.root.string());
  }
  const fs::path suite = options.cacheRoot / "kernelbench-suites" / hashString(fs::weakly_canonical(options.root).string()).hex().substr(0, 16);
  // The checkout's files by (level, number); a level the checkout lacks leaves its problems out of the suite.
  std::vector<int> levels;
  for (const auto& [level, number] : options.needed) {
    if (fs::is_directory(options.root / "KernelBench" / fmt::format("level{}", level)) &&
        std::find(levels.begin(), levels.end(), level) == levels.end()) {
      levels.push_back(level);
    }
  }
  std::map<std::pair<int, int>, KernelBenchSourceFile> files;
  if (!levels.empty()) {
    for (auto& f : listKernelBenchSources(options.root, levels)) files.emplace(std::pair{f.level, f.number}, std::move(f));
  }

  std::map<std::string, ImportedProblem> done;  // by source, "level1/19_ReLU.py"
  if (const fs::path report = suite / "import-report.json"; fs::is_regular_file(report)) {
    for (auto& p : importReportFromJson(readJsonFile(report), report.string()).problems) done.emplace(p.source, std::move(p));
  }
  KernelBenchImportOptions import{.root = options.root, .outDir = suite};
  import.levels.clear();
  for (const auto& needed : options.needed) {
    const auto file = files.find(needed);
    if (file == files.end()) continue;
    const auto it = done.find(file->second.relative);
    // An imported problem keeps the KernelBench file it came from: one whose file changed since is
    // imported again. A skipped file is not retried (its reason stands; remove the cache folder to retry),
    // unless the tracer never judged it (killed, out of time): that was the machine, not the file.
    if (it != done.end() && it->second.status != "imported" && !it->second.transient) continue;
    const fs::path kept = it == done.end() ? fs::path() : suite / it->second.id / "kernelbench_source.py";
    if (it != done.end() && fs::is_regular_file(kept) && readFile(kept) == readFile(file->second.path)) continue;
    const auto [level, number] = needed;
    import.only.push_back(fmt::format("level{}/{}", level, number));
    if (std::find(import.levels.begin(), import.levels.end(), level) == import.levels.end()) import.levels.push_back(level);
  }
  if (import.only.empty()) return suite;
  log::info("importing {} KernelBench problem(s) from {} into the cache {} (once; later runs reuse them)", import.only.size(), options.root.string(),
            suite.string());
  import.progress = options.progress;
  fs::create_directories(suite);
  importKernelBench(import);
  return suite;
}

std::optional<double> kernelBenchFloat32Tolerance(const fs::path& root) {
  for (const fs::path& file : {root / "src" / "kernelbench" / "eval.py", root / "src" / "eval.py"}) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    const std::string text = readFile(file);
    if (text.find("get_tolerance_for_precision") != std::string::npos) return 1e-4;
    if (text.find("atol=1e-02") != std::string::npos || text.find("atol=1e-2") != std::string::npos) return 1e-2;
  }
  return std::nullopt;
}

}  // namespace cuset
