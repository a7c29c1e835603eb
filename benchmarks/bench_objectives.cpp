// Training-step time of the CuSeT objective against SFT on the same model and batch, side by side in
// one run, ratios printed. Targets (issue #8): self-confidence overhead <= 10%, reference <= 40%.
//   bench_objectives [--threads N] [--steps N]
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_model.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/objectives.hpp"

namespace {

// The model and batch of bench_train, so the figures are comparable.
using namespace bench;  // the model's sizes

cuset::CausalLm makeModel() { return cuset::CausalLm(benchModelConfig()); }

torch::Tensor tokenLosses(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), targets.reshape({-1}),
                                              torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
      .view({kBatch, kSeq});
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, steps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::stoi(argv[i + 1]);
    if (flag == "--steps") steps = std::stoi(argv[i + 1]);
  }
  cuset::setComputeThreads(threads);
  torch::manual_seed(0);
  const auto ids = torch::randint(0, kVocab, {kBatch, kSeq + 1}, torch::kInt64);
  const auto inputs = ids.narrow(1, 0, kSeq), targets = ids.narrow(1, 1, kSeq);
  const auto mask = torch::ones({kBatch, kSeq});
  const auto sensitive = (torch::rand({kBatch, kSeq}) < 0.3).to(torch::kFloat32);  // ~30% sensitive, as in CUDA answers

  auto timeObjective = [&](cuset::ObjectiveConfig config) {
    torch::manual_seed(0);
    cuset::CausalLm model = makeModel();
    std::optional<cuset::CausalLm> reference;
    if (config.needsReference()) {
      reference.emplace(makeModel());
      (*reference)->eval();
    }
    torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3));
    std::int64_t stepIndex = 0;
    auto step = [&] {
      optimizer.zero_grad();
      cuset::ObjectiveBatch batch{tokenLosses(model->forward(inputs), targets), mask, sensitive, torch::Tensor(), stepIndex++};
      if (reference) {
        c10::InferenceMode inference;
        batch.referenceLosses = tokenLosses((*reference)->forward(inputs), targets);
      }
      cuset::computeObjective(config, batch).loss.backward();
      optimizer.step();
    };
    for (int i = 0; i < 3; ++i) step();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / steps;
  };

  cuset::ObjectiveConfig sft;
  cuset::ObjectiveConfig self;
  self.kind = cuset::ObjectiveKind::cuset;
  cuset::ObjectiveConfig reference = self;
  reference.confidence = "reference";
  const double sftMs = timeObjective(sft), selfMs = timeObjective(self), refMs = timeObjective(reference);
  fmt::print("objective step time, {} threads, batch {}x{}, {} steps each\n", threads, kBatch, kSeq, steps);
  fmt::print("{:<26} {:>9}  {:>7}  {}\n", "objective", "ms/step", "vs sft", "target");
  fmt::print("{:<26} {:>9.2f}  {:>7}  {}\n", "sft", sftMs, "1.00x", "");
  fmt::print("{:<26} {:>9.2f}  {:>6.2f}x  <= 1.10x: {}\n", "cuset (self confidence)", selfMs, selfMs / sftMs,
             selfMs / sftMs <= 1.10 ? "met" : "NOT met");
  fmt::print("{:<26} {:>9.2f}  {:>6.2f}x  <= 1.40x: {}\n", "cuset (reference)", refMs, refMs / sftMs, refMs / sftMs <= 1.40 ? "met" : "NOT met");
  return 0;
}
