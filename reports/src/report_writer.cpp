#include "cuset/reports/report_writer.hpp"

#include <unistd.h>

#include <cstdlib>

#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"
#include "cuset/reports/run_compare.hpp"
#include "cuset/reports/run_data.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

bool hasAssets(const fs::path& dir) { return !dir.empty() && fs::is_regular_file(dir / "report-assets.js"); }

}  // namespace

fs::path findReportAssetsDir() {
  if (const char* env = std::getenv("CUSET_REPORT_ASSETS"); env && *env) return hasAssets(env) ? fs::path(env) : fs::path();
  try {
    if (const fs::path dir = resources().pathIfAny("report_assets"); hasAssets(dir)) return dir;
  } catch (const std::exception&) {
    // no resource file: reports without highlighting
  }
  return {};
}

ReportOutcome writeRunReports(const ReportOptions& options) {
  ReportOutcome out;
  RunData run = loadRun(options.runDir);
  if (options.includeDefective && run.runInfo.is_object()) run.runInfo["include_defective"] = *options.includeDefective;
  out.warnings = run.warnings;
  out.summary = computeSummary(run.results, run.runInfo, run.warnings);
  if (options.compareDir) {
    RunData base = loadRun(*options.compareDir);
    if (options.includeDefective && base.runInfo.is_object()) base.runInfo["include_defective"] = *options.includeDefective;
    for (const auto& w : base.warnings) out.warnings.push_back("base run: " + w);
    const nlohmann::json baseSummary = computeSummary(base.results, base.runInfo, base.warnings);
    out.summary["comparison"] = compareSummaries(baseSummary, out.summary, options.compareDir->string());
    out.summary["warnings"] = out.warnings;
    out.regression = hasRegression(out.summary["comparison"]);
  }

  const fs::path assets = options.assetsDir.empty() ? findReportAssetsDir() : options.assetsDir;
  std::string script, style;
  if (hasAssets(assets)) {
    script = readFile(assets / "report-assets.js");
    if (fs::is_regular_file(assets / "report-assets.css")) style = readFile(assets / "report-assets.css");
    out.assetsInlined = true;
  }

  auto write = [&](const char* name, const std::string& content) {
    const fs::path path = options.runDir / name;
    writeFileAtomic(path, content);
    out.written.push_back(path);
  };
  write("summary.json", dumpJson(out.summary, 2) + "\n");
  write("summary.md", renderMarkdown(out.summary));
  write("junit.xml", renderJunit(out.summary, run.results));
  write("report.html", renderHtml(out.summary, run.results, script, style));
  for (const auto& w : out.warnings) log::warn("{}", w);
  out.results = std::move(run.results);
  return out;
}

ReportPages writeReportPages(const fs::path& dir, const std::string& stem, const nlohmann::json& data, const std::string& markdown,
                             const std::string& html) {
  const ReportPages pages{dir / (stem + ".json"), dir / (stem + ".md"), dir / (stem + ".html")};
  writeFileAtomic(pages.json, dumpJson(data, 2) + "\n");
  writeFileAtomic(pages.markdown, markdown);
  writeFileAtomic(pages.html, html);
  return pages;
}

}  // namespace cuset
