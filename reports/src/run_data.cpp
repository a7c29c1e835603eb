#include "cuset/reports/run_data.hpp"

#include <fmt/format.h>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"

namespace fs = std::filesystem;

namespace cuset {

RunData loadRun(const fs::path& runDir) {
  RunData run;
  run.dir = runDir;
  const fs::path resultsPath = runDir / "results.jsonl";
  if (!fs::is_regular_file(resultsPath)) {
    throw makeError("{}: no results.jsonl in this folder (is it a run folder written by `cuset eval`?)", runDir.string());
  }
  const fs::path runJson = runDir / "run.json";
  if (fs::is_regular_file(runJson)) {
    try {
      run.runInfo = readJsonFile(runJson);
    } catch (const Error& e) {
      run.warnings.push_back(fmt::format("{}: unreadable, the report has no run header ({})", runJson.string(), e.what()));
    }
  } else {
    run.warnings.push_back(fmt::format("{}: missing, the report has no run header", runJson.string()));
  }

  const std::string content = readFile(resultsPath);
  std::size_t start = 0, lineNo = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    const bool lastUnterminated = end == std::string::npos;
    if (lastUnterminated) end = content.size();
    ++lineNo;
    const std::string_view line(content.data() + start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      run.results.push_back(evalResultFromJson(parseJson(line, "record")));
    } catch (const Error& e) {
      if (lastUnterminated) {
        run.warnings.push_back(
            fmt::format("{}:{}: truncated last record ({} bytes) left out; was the run interrupted?", resultsPath.string(), lineNo, line.size()));
      } else {
        run.warnings.push_back(fmt::format("{}:{}: malformed record left out ({})", resultsPath.string(), lineNo, e.what()));
      }
    }
  }
  return run;
}

}  // namespace cuset
