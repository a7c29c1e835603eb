#include "cuset/trainer/analysis.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "cuset/common/progress.hpp"
#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/lora_adapter.hpp"
#include "cuset/trainer/objectives.hpp"
#include "cuset/trainer/sensitivity_lexer.hpp"
#include "cuset/trainer/tokenizer.hpp"

namespace cuset {
namespace {

constexpr int kBins = 20;

struct Histogram {
  std::vector<std::int64_t> counts = std::vector<std::int64_t>(kBins, 0);
  std::int64_t total = 0, high = 0;
  double sum = 0.0;
  void add(double c, double highCut) {
    ++counts[static_cast<std::size_t>(std::clamp(static_cast<int>(c * kBins), 0, kBins - 1))];
    ++total;
    high += c >= highCut;
    sum += c;
  }
  nlohmann::json json() const {
    return {
        {"counts", counts}, {"tokens", total}, {"high_confidence_share", total ? double(high) / total : 0.0}, {"mean", total ? sum / total : 0.0}};
  }
};

}  // namespace

namespace {

// Categories per token: every category whose lexer span overlaps it.
std::vector<std::vector<std::string>> tokenCategories(const SensitivityLexer& lexer, const TokenizedExample& ex) {
  const auto spans = lexer.analyzeMarkdown(ex.text);
  std::vector<std::vector<std::string>> categories(ex.ids.size());
  for (std::size_t t = 0; t < ex.ids.size(); ++t) {
    for (const auto& s : spans) {
      if (s.start < ex.spans[t].second && ex.spans[t].first < s.end) {
        const std::string name(sensitivityCategoryName(s.category));
        if (std::find(categories[t].begin(), categories[t].end(), name) == categories[t].end()) categories[t].push_back(name);
      }
    }
  }
  return categories;
}

// The model's probability of each next token (entry t: token t + 1), as float64 on the CPU.
torch::Tensor nextTokenConfidence(CausalLm& model, const TokenizedExample& ex, const torch::Device& device) {
  std::vector<std::int64_t> ids(ex.ids.begin(), ex.ids.end());
  const auto input = torch::tensor(ids, torch::kInt64).unsqueeze(0).to(device);
  const auto logits = model->forward(input.narrow(1, 0, input.size(1) - 1)).to(torch::kFloat32);
  const auto logProbs = torch::log_softmax(logits[0], -1);
  const auto targets = input[0].narrow(0, 1, input.size(1) - 1);
  return logProbs.gather(1, targets.unsqueeze(1)).squeeze(1).exp().to(torch::kCPU).to(torch::kFloat64).contiguous();
}

// The response tokens of one sample, as the heat map shows them.
struct ResponseTokens {
  const std::vector<double>& confidence;
  const std::vector<std::size_t>& tokenIndex;               // of each, in the example
  const std::vector<std::vector<std::string>>& categories;  // by example token
  const std::vector<int>& regionOf;                         // -1: in no low-confidence region
};

nlohmann::json heatmapSample(const TokenizedExample& ex, const ResponseTokens& r, std::size_t regions) {
  const std::size_t from = ex.spans[r.tokenIndex.front()].first, to = ex.spans[r.tokenIndex.back()].second;
  nlohmann::json tokens = nlohmann::json::array();
  for (std::size_t k = 0; k < r.confidence.size(); ++k) {
    const auto [b, e] = ex.spans[r.tokenIndex[k]];
    tokens.push_back({{"start", b - from},
                      {"end", e - from},
                      {"confidence", r.confidence[k]},
                      {"categories", r.categories[r.tokenIndex[k]]},
                      {"region", r.regionOf[k]}});
  }
  return {{"text", ex.text.substr(from, to - from)}, {"tokens", tokens}, {"regions", regions}};
}

}  // namespace

nlohmann::json analyzeModel(const AnalysisOptions& o) {
  setComputeThreads(o.threads);
  torch::InferenceMode inference;
  const BpeTokenizer tokenizer = BpeTokenizer::load(modelTokenizerPath(o.modelDir));
  const ChatFormat format = modelChatFormat(o.modelDir);
  const torch::Device device = resolveDevice(o.device);
  CausalLm model = loadModelFolder(o.modelDir, device);  // a full checkpoint, or a LoRA adapter on its base
  model->eval();

  std::vector<ChatExample> examples = readChatJsonl(o.dataFile);
  if (examples.size() > o.maxSamples) examples.resize(o.maxSamples);
  const SensitivityLexer lexer;
  Histogram sensitive, other;
  std::map<std::string, Histogram> perCategory;
  std::map<std::string, std::int64_t> regionCategories;
  std::vector<std::int64_t> regionLengths;
  std::int64_t samplesWithRegions = 0;
  nlohmann::json heatmap = nlohmann::json::array();
  ProgressBar progress("analyze", examples.size(), "sample", o.showProgress);
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const TokenizedExample ex = tokenizeChat(tokenizer, format, examples[i], o.maxTokens);
    progress.advance();
    if (ex.ids.size() < 2) continue;
    const auto categories = tokenCategories(lexer, ex);
    const auto confidence = nextTokenConfidence(model, ex, device);
    const auto c = confidence.accessor<double, 1>();
    // Token t + 1 is predicted at position t; only response tokens count.
    std::vector<bool> lowSensitive;
    std::vector<double> conf;
    std::vector<std::size_t> tokenIndex;
    for (std::size_t t = 1; t < ex.ids.size(); ++t) {
      if (!ex.lossMask[t]) continue;
      const double p = c[static_cast<std::int64_t>(t - 1)];
      const bool isSensitive = !categories[t].empty();
      (isSensitive ? sensitive : other).add(p, o.highConfidence);
      for (const auto& name : categories[t]) perCategory[name].add(p, o.highConfidence);
      lowSensitive.push_back(isSensitive && p < o.regions.regionThreshold);
      conf.push_back(p);
      tokenIndex.push_back(t);
    }
    const auto regions = findRegions(lowSensitive, conf, o.regions.regionGap, o.regions.regionMinTokens);
    samplesWithRegions += !regions.empty();
    std::vector<int> regionOf(conf.size(), -1);
    for (std::size_t r = 0; r < regions.size(); ++r) {
      regionLengths.push_back(regions[r].last - regions[r].first + 1);
      std::set<std::string> seen;
      for (auto k = regions[r].first; k <= regions[r].last; ++k) {
        regionOf[static_cast<std::size_t>(k)] = static_cast<int>(r);
        if (lowSensitive[static_cast<std::size_t>(k)]) {
          for (const auto& name : categories[tokenIndex[static_cast<std::size_t>(k)]]) seen.insert(name);
        }
      }
      for (const auto& name : seen) ++regionCategories[name];
    }
    if (heatmap.size() < o.heatmapSamples && !conf.empty()) {
      heatmap.push_back(
          heatmapSample(ex, {.confidence = conf, .tokenIndex = tokenIndex, .categories = categories, .regionOf = regionOf}, regions.size()));
    }
  }
  progress.finish();

  nlohmann::json perCategoryJson = nlohmann::json::object();
  for (const auto& [name, h] : perCategory) perCategoryJson[name] = h.json();
  std::sort(regionLengths.begin(), regionLengths.end());
  double meanLength = 0.0;
  for (auto l : regionLengths) meanLength += static_cast<double>(l);
  nlohmann::json regionCats = nlohmann::json::object();
  for (const auto& [name, n] : regionCategories) regionCats[name] = n;
  return {{"model", o.modelDir.string()},
          {"data", o.dataFile.string()},
          {"samples", examples.size()},
          {"high_confidence", o.highConfidence},
          {"bins", kBins},
          {"sensitive", sensitive.json()},
          {"other", other.json()},
          {"categories", perCategoryJson},
          {"regions",
           {{"threshold", o.regions.regionThreshold},
            {"gap", o.regions.regionGap},
            {"min_tokens", o.regions.regionMinTokens},
            {"count", regionLengths.size()},
            {"samples_with_regions", samplesWithRegions},
            {"mean_length", regionLengths.empty() ? 0.0 : meanLength / static_cast<double>(regionLengths.size())},
            {"median_length", regionLengths.empty() ? 0 : regionLengths[regionLengths.size() / 2]},
            {"categories", regionCats}}},
          {"heatmap", heatmap}};
}

}  // namespace cuset
