#include "cuset/trainer/allocator_tuning.hpp"
#include "cuset/trainer/generation.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/llama_model.hpp"
#include "cuset/trainer/lora_adapter.hpp"
#include "cuset/trainer/problem_prompt.hpp"
#include "cuset/trainer/tokenizer.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// One token per row from logits (B, V): greedy at temperature 0, else nucleus sampling.
torch::Tensor sample(const torch::Tensor& logits, double temperature, double topP, torch::Generator& gen) {
  if (temperature <= 0) return logits.argmax(-1);
  auto probs = torch::softmax(logits.to(torch::kFloat32) / temperature, -1);
  if (topP < 1.0) {
    auto [sorted, indices] = probs.sort(-1, true);
    const auto cumulative = sorted.cumsum(-1);
    sorted.masked_fill_(cumulative - sorted > topP, 0.0);  // keep the smallest prefix reaching top_p
    probs = torch::zeros_like(probs).scatter(-1, indices, sorted);
  }
  return torch::multinomial(probs, 1, false, gen).squeeze(-1);
}

}  // namespace

GenerateSummary runGenerationJobs(const GenerateOptions& o, const std::vector<ChatJob>& jobs) {
  keepLargeAllocationsMapped();
  setComputeThreads(o.threads);
  if (o.maxNewTokens < 1) throw Error("--max-new-tokens must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  const BpeTokenizer tokenizer = BpeTokenizer::load(modelTokenizerPath(o.modelDir));
  const ChatFormat format = modelChatFormat(o.modelDir);
  const torch::Device device = resolveDevice(o.device);
  CausalLm model = loadModelFolder(o.modelDir, device);  // a full checkpoint, or a LoRA adapter on its base
  if (o.bf16) model->to(torch::kBFloat16);
  model->eval();
  torch::NoGradGuard noGrad;
  std::vector<std::int32_t> stops;
  std::vector<std::string> stopTokens = format.stopTokens();
  stopTokens.insert(stopTokens.end(), {"<|im_end|>", "<|endoftext|>"});
  for (const auto& s : stopTokens) {
    const std::int32_t id = tokenizer.tokenId(s);
    if (id >= 0 && std::find(stops.begin(), stops.end(), id) == stops.end()) stops.push_back(id);
  }
  const std::string modelName = o.modelName.empty() ? o.modelDir.filename().string() : o.modelName;
  auto gen = torch::make_generator<torch::CPUGeneratorImpl>(o.seed);
  GenerateSummary summary;
  std::string out;
  ProgressBar progress("generate", jobs.size(), "problem", o.showProgress);
  for (const auto& job : jobs) {
    if (job.samples.empty()) continue;
    const std::string prompt = format.renderPrompt(job.messages);
    const auto promptIds = tokenizer.encode(prompt).ids;
    const auto k = static_cast<std::int64_t>(job.samples.size());
    // All k samples share the prompt: one batch of k identical rows, so no padding is needed.
    const auto prompt64 = torch::tensor(std::vector<std::int64_t>(promptIds.begin(), promptIds.end()), torch::kInt64);
    auto sequence = prompt64.unsqueeze(0).repeat({k, 1}).to(device);  // (k, P)
    KvCache cache;
    auto logits = o.useKvCache ? model->forward(sequence, &cache) : model->forward(sequence);
    std::vector<std::vector<std::int32_t>> generated(static_cast<std::size_t>(k));
    std::vector<bool> finished(static_cast<std::size_t>(k), false);
    for (int step = 0; step < o.maxNewTokens; ++step) {
      // Sampling on the CPU with one seeded generator, so results do not depend on the device.
      const auto next = sample(logits.select(1, logits.size(1) - 1).to(torch::kCPU, torch::kFloat32), o.temperature, o.topP, gen);  // (k)
      bool all = true;
      for (std::int64_t r = 0; r < k; ++r) {
        const auto id = static_cast<std::int32_t>(next[r].item<std::int64_t>());
        if (!finished[static_cast<std::size_t>(r)]) {
          if (std::find(stops.begin(), stops.end(), id) != stops.end()) {
            finished[static_cast<std::size_t>(r)] = true;
          } else {
            auto& tokens = generated[static_cast<std::size_t>(r)];
            tokens.push_back(id);
            if (!o.stopStrings.empty()) {
              // Only the tail can newly contain a stop string: decode the last few tokens.
              const std::size_t from = tokens.size() > 16 ? tokens.size() - 16 : 0;
              const std::string tail = tokenizer.decode(std::span(tokens).subspan(from), true);
              for (const auto& stop : o.stopStrings) {
                if (!stop.empty() && tail.find(stop) != std::string::npos) finished[static_cast<std::size_t>(r)] = true;
              }
            }
          }
        }
        all = all && finished[static_cast<std::size_t>(r)];
      }
      summary.generatedTokens += static_cast<std::size_t>(k);
      if (all) break;
      const auto column = next.unsqueeze(1).to(device);  // (k, 1)
      if (o.useKvCache) {
        logits = model->forward(column, &cache);
      } else {
        sequence = torch::cat({sequence, column}, 1);
        logits = model->forward(sequence);
      }
    }
    for (std::int64_t r = 0; r < k; ++r) {
      std::string response = tokenizer.decode(generated[static_cast<std::size_t>(r)], true);
      for (const auto& stop : o.stopStrings) {
        if (const auto at = response.find(stop); !stop.empty() && at != std::string::npos) response.resize(at);
      }
      // A stop string may cut inside a character: invalid UTF-8 becomes U+FFFD rather than an error.
      out +=
          nlohmann::json{{"problem", job.problem}, {"sample", job.samples[static_cast<std::size_t>(r)]}, {"model", modelName}, {"response", response}}
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
          "\n";
      ++summary.responses;
    }
    ++summary.problems;
    progress.advance();
  }
  progress.finish();
  writeFileAtomic(o.outFile, out);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

GenerateSummary runGeneration(const GenerateOptions& o) {
  if (o.samples < 1) throw Error("--samples must be >= 1");
  return runGenerationJobs(o, suiteChatJobs(o.problemsDir, o.prompt, o.samples, o.promptContext));
}

}  // namespace cuset
