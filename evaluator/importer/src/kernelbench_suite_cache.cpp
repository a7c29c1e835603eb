#include "cuset/evaluator/importer/kernelbench_suite_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/importer/kernelbench_import.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// level -> number -> file name ("19_ReLU.py") of the checkout's problem files.
std::map<int, std::map<int, std::string>> checkoutFiles(const fs::path& root, const std::set<int>& levels) {
  std::map<int, std::map<int, std::string>> files;
  for (int level : levels) {
    const fs::path dir = root / "KernelBench" / fmt::format("level{}", level);
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      const std::size_t underscore = name.find('_');
      if (entry.path().extension() != ".py" || underscore == 0 || underscore == std::string::npos) continue;
      try {
        files[level][std::stoi(name.substr(0, underscore))] = name;
      } catch (const std::exception&) {
        // not a numbered problem file
      }
    }
  }
  return files;
}

}  // namespace

fs::path kernelBenchSuiteOnFirstUse(const KernelBenchSuiteCacheOptions& options) {
  if (!fs::is_directory(options.root / "KernelBench")) {
    throw makeError("--kernelbench {}: not a KernelBench checkout (no KernelBench/level{{N}} folders in it)", options.root.string());
  }
  const fs::path suite = options.cacheRoot / "kernelbench-suites" / hashString(fs::weakly_canonical(options.root).string()).hex().substr(0, 16);
  std::set<int> levels;
  for (const auto& [level, number] : options.needed) levels.insert(level);
  const auto files = checkoutFiles(options.root, levels);

  std::map<std::string, ImportedProblem> done;  // by source, "level1/19_ReLU.py"
  if (const fs::path report = suite / "import-report.json"; fs::is_regular_file(report)) {
    for (auto& p : importReportFromJson(readJsonFile(report), report.string()).problems) done.emplace(p.source, std::move(p));
  }
  KernelBenchImportOptions import{.root = options.root, .outDir = suite};
  import.levels.clear();
  for (const auto& [level, number] : options.needed) {
    auto inLevel = files.find(level);
    if (inLevel == files.end() || !inLevel->second.contains(number)) continue;
    const std::string& file = inLevel->second.at(number);
    const std::string source = fmt::format("level{}/{}", level, file);
    auto it = done.find(source);
    // An imported problem keeps the KernelBench file it came from: one whose file changed since is
    // imported again. A skipped file is not retried (its reason stands; remove the cache folder to retry).
    if (it != done.end() && it->second.status != "imported") continue;
    const fs::path kept = it == done.end() ? fs::path() : suite / it->second.id / "kernelbench_source.py";
    if (it != done.end() && fs::is_regular_file(kept) && readFile(kept) == readFile(options.root / "KernelBench" / source)) continue;
    import.only.push_back(fmt::format("level{}/{}", level, number));
    if (std::find(import.levels.begin(), import.levels.end(), level) == import.levels.end()) import.levels.push_back(level);
  }
  if (import.only.empty()) return suite;
  log::info("importing {} KernelBench problem(s) from {} into the cache {} (once; later runs reuse them)", import.only.size(),
            options.root.string(), suite.string());
  import.progress = options.progress;
  fs::create_directories(suite);
  importKernelBench(import);
  return suite;
}

}  // namespace cuset
