#pragma once
// Logits a reference implementation printed (tests/trainer/reference/: transformers, PEFT) as JSON rows,
// compared with this model's. Shared by test_llama_model and test_lora.
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace cuset::test {

// [[logit, ...], ...] (one row per position) as a float64 tensor.
inline torch::Tensor referenceLogits(const nlohmann::json& rows) {
  const auto values = rows.get<std::vector<std::vector<double>>>();
  auto out = torch::zeros({static_cast<std::int64_t>(values.size()), static_cast<std::int64_t>(values.front().size())}, torch::kFloat64);
  for (std::size_t t = 0; t < values.size(); ++t) out[static_cast<std::int64_t>(t)] = torch::tensor(values[t], torch::kFloat64);
  return out;
}

// The largest |logits - reference| over every position and vocabulary entry.
inline double maxLogitDifference(const torch::Tensor& logits, const nlohmann::json& rows) {
  return (logits.to(torch::kFloat64) - referenceLogits(rows)).abs().max().item<double>();
}

}  // namespace cuset::test
