#pragma once
// `cuset leaderboard --config FILE`: which models (served endpoints or checkpoint folders, each with
// its own generation settings), which problem suite, k, and how to evaluate. Every error names the
// file, the field and the line.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuset/models/endpoint_generation.hpp"

namespace cuset {

struct LeaderboardModel {
  std::string name;  // row label, folder name under OUT/models/, and the candidates' "model"
  // Exactly one of: an endpoint (endpoint.baseUrl non-empty) or a checkpoint folder.
  EndpointConfig endpoint;
  std::string servedModel;  // with an endpoint: the served model's name
  std::filesystem::path checkpoint;
  double temperature = 0.8;
  double topP = 0.95;
  int maxTokens = 4096;
  std::optional<std::uint64_t> seed;
  PromptStyle prompt = PromptStyle::kernelbench;
  std::filesystem::path kernelbenchRoot;  // kernelbench-native: the checkout (empty: the suite's import)
  bool useN = true;
  // Optional prices per million tokens, for a cost column.
  std::optional<double> promptPricePerMTok;
  std::optional<double> completionPricePerMTok;
  bool isEndpoint() const { return !endpoint.baseUrl.empty(); }
};

struct LeaderboardConfig {
  std::filesystem::path source;  // the YAML file
  std::string name;
  std::filesystem::path outDir;
  std::filesystem::path problemsDir;
  int k = 1;
  std::vector<LeaderboardModel> models;
  // Evaluation, the same for every model: same inputs (seed), same sizes, same trials.
  std::string backend = "sim";
  std::string sizes;  // empty: the backend's default
  int trials = 3;
  std::uint64_t seed = 1;
  std::string timer = "cupti";
  double maxTimingSeconds = 2.0;
  std::size_t jobs = 0;
  bool includeDefective = false;  // count problems flagged defective (`defect:`) in the board's metrics

  static LeaderboardConfig load(const std::filesystem::path& path);
};

}  // namespace cuset
