#pragma once
// Stage markers of a multi-stage job (`cuset loop`, `cuset leaderboard`): state/<stage>.started and
// state/<stage>.done hold what the stage was run with, so a rerun skips finished stages, resumes an
// interrupted one, and never passes off output made under other settings as current.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"

namespace cuset {

// Finished stages whose inputs changed are an error for done(), rather than silently reused.
class StageLedger {
 public:
  // The folder is made by the first start() or finish(), so reading the ledger writes nothing.
  explicit StageLedger(std::filesystem::path dir) : dir_(std::move(dir)) {}
  bool done(const std::string& stage, const nlohmann::json& inputs) const {
    const std::filesystem::path marker = dir_ / (stage + ".done");
    if (!std::filesystem::exists(marker)) return false;
    nlohmann::json recorded;
    try {
      recorded = nlohmann::json::parse(readFile(marker));
    } catch (const nlohmann::json::exception&) {
      return false;  // a torn marker: redo the stage
    }
    const nlohmann::json before = recorded.value("inputs", nlohmann::json::object());
    if (before != inputs) {
      std::vector<std::string> changed;
      for (const auto& [key, value] : inputs.items()) {
        if (!before.contains(key) || before[key] != value) changed.push_back(key);
      }
      for (const auto& [key, value] : before.items()) {
        if (!inputs.contains(key)) changed.push_back(key);
      }
      throw makeError("{}: stage '{}' already finished with other settings (changed: {}); use another `out:` folder, or delete {} to redo it",
                      marker.string(), stage, fmt::format("{}", fmt::join(changed, ", ")), marker.string());
    }
    return true;
  }
  // Finished with exactly these inputs (no error when they differ: for jobs that redo a changed stage).
  bool doneWith(const std::string& stage, const nlohmann::json& inputs) const {
    try {
      const std::filesystem::path marker = dir_ / (stage + ".done");
      return std::filesystem::exists(marker) && nlohmann::json::parse(readFile(marker)).value("inputs", nlohmann::json()) == inputs;
    } catch (const nlohmann::json::exception&) {
      return false;
    }
  }
  // A stage interrupted under other settings leaves partial output (checkpoints, results) that must
  // not be resumed into this one.
  bool startedWithOtherInputs(const std::string& stage, const nlohmann::json& inputs) const {
    const std::filesystem::path marker = dir_ / (stage + ".started");
    if (!std::filesystem::exists(marker)) return false;
    try {
      return nlohmann::json::parse(readFile(marker)).value("inputs", nlohmann::json()) != inputs;
    } catch (const nlohmann::json::exception&) {
      return true;
    }
  }
  void start(const std::string& stage, const nlohmann::json& inputs) const {
    std::filesystem::create_directories(dir_);
    writeFileAtomic(dir_ / (stage + ".started"), dumpJson(nlohmann::json{{"inputs", inputs}}, 2) + "\n");
  }
  void finish(const std::string& stage, const nlohmann::json& inputs, double seconds) const {
    std::filesystem::create_directories(dir_);
    writeFileAtomic(dir_ / (stage + ".done"), dumpJson(nlohmann::json{{"inputs", inputs}, {"seconds", seconds}}, 2) + "\n");
  }
  // How long a finished stage took, as its marker records.
  std::optional<double> secondsOf(const std::string& stage) const {
    try {
      const nlohmann::json j = nlohmann::json::parse(readFile(dir_ / (stage + ".done")));
      if (j.contains("seconds") && j["seconds"].is_number()) return j["seconds"].get<double>();
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace cuset
