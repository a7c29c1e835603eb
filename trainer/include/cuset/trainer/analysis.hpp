#pragma once
// `cuset analyze`: the analysis behind CuSeT (DESIGN §5). A model reads a dataset; for every response
// token we record its confidence p(y_t | y_<t) and its sensitivity categories, then summarise:
// confidence histograms of sensitive vs other tokens (overall and per category), the share predicted
// with high confidence, low-confidence regions (the objective's definition and knobs), and which
// categories those regions fall in. The result is plain JSON; reports/ renders analysis.html.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cuset/trainer/objective_config.hpp"

namespace cuset {

struct AnalysisOptions {
  std::filesystem::path modelDir;  // HF folder: config.json, model.safetensors, tokenizer.json
  std::filesystem::path dataFile;  // chat JSONL
  std::size_t maxSamples = 200;
  std::size_t heatmapSamples = 30;  // samples whose tokens are kept for the heat map
  std::size_t maxTokens = 1024;
  double highConfidence = 0.9;
  ObjectiveConfig regions;  // regions.threshold / gap / min_tokens as in training
  int threads = 0;
  std::string device = "auto";
  bool showProgress = true;
};

// {"model", "data", "samples", "tokens": {...}, "histograms": {...}, "categories": [...], "regions": {...},
//  "heatmap": [{"text": ..., "tokens": [{"start", "end", "confidence", "sensitive", "categories", "region"}]}]}
nlohmann::json analyzeModel(const AnalysisOptions& options);

}  // namespace cuset
