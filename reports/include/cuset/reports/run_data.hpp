#pragma once
// Reading a run folder for reporting: run.json and results.jsonl, tolerant of damage. A report of a
// run that crashed or is still being written is exactly when one is needed, so a truncated last
// line or a malformed record becomes a warning (naming file and line) and is left out.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

struct RunData {
  std::filesystem::path dir;
  nlohmann::json runInfo = nlohmann::json::object();  // run.json, or {} when absent or unreadable
  std::vector<EvalResult> results;
  std::vector<std::string> warnings;
};

// Throws cuset::Error only when RUN_DIR has no results.jsonl to read.
RunData loadRun(const std::filesystem::path& runDir);

}  // namespace cuset
