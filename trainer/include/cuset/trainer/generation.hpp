#pragma once
// `cuset generate`: k sampled responses per problem, written as evaluator candidate JSONL.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/trainer/problem_prompt.hpp"

namespace cuset {

struct GenerateOptions {
  std::filesystem::path modelDir;  // HF folder: config.json, model.safetensors, tokenizer.json
  std::filesystem::path problemsDir;
  std::filesystem::path outFile;  // candidate JSONL
  std::string modelName;          // "model" field; default: the model folder's name
  int samples = 1;                // k per problem
  double temperature = 0.8;       // 0: greedy
  double topP = 0.95;
  int maxNewTokens = 512;
  std::uint64_t seed = 1;
  std::vector<std::string> stopStrings;  // a response ends before the first occurrence of any
  PromptStyle prompt = PromptStyle::cuset;
  PromptContext promptContext;  // kernelbench-native: the KernelBench checkout
  bool useKvCache = true;
  int threads = 0;
  std::string device = "auto";  // cpu, cuda, auto
  bool bf16 = false;            // weights and activations in bfloat16
  bool showProgress = true;
};

struct GenerateSummary {
  std::size_t problems = 0;
  std::size_t responses = 0;
  std::size_t generatedTokens = 0;
  double seconds = 0.0;
};

GenerateSummary runGeneration(const GenerateOptions& options);

// The same for chats a caller made (`cuset refine`); the options' problemsDir, samples and prompt are
// not used. Each job's samples are one batch sharing its prompt.
GenerateSummary runGenerationJobs(const GenerateOptions& options, const std::vector<ChatJob>& jobs);

}  // namespace cuset
