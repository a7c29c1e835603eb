#pragma once
// The instruction a model sees for a problem, shared by `cuset generate` (prompts) and `cuset data
// synth` (training instructions), so a model is trained on exactly the prompt form it is asked with.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/trainer/chat_data.hpp"

namespace cuset {

struct Problem;

// Description, inputs and outputs with dtypes and shapes (and the small sizes), and the candidate-format
// contract with a short example.
std::string renderProblemPrompt(const Problem& problem);

// How a problem is put to a chat model (docs/prompts.md):
//  cuset:       one user message, renderProblemPrompt (what the built-in model is trained on);
//  kernelbench: KernelBench's shape: a system message giving the task, a worked example architecture
//               with its answer, then the problem's architecture (its Model source when imported).
//  Both ask for this project's candidate format: device code with a /*@cuset launch manifest.
//  kernelbench-native: exactly the request KernelBench itself builds (its one-shot prompt, from the
//               templates and examples of the user's KernelBench checkout), answered in KernelBench's
//               own format (ModelNew + load_inline, docs/kernelbench-solutions.md).
enum class PromptStyle { cuset, kernelbench, kernelbenchNative };
std::optional<PromptStyle> parsePromptStyle(std::string_view name);
std::string_view promptStyleName(PromptStyle style);

// What a style may need beyond the problem: for kernelbench-native, the KernelBench checkout whose
// src/kernelbench/prompts/ it renders from (empty: the one the suite was imported from, recorded in
// its import-report.json).
struct PromptContext {
  std::filesystem::path kernelbenchRoot;
  std::filesystem::path problemsDir;  // where to look for import-report.json
};
std::vector<ChatMessage> renderProblemChat(const Problem& problem, PromptStyle style, const PromptContext& context = {});

// KernelBench's own one-shot prompt for each problem (one helper run for all of them): id -> text.
// Throws cuset::Error naming the checkout when its templates cannot be read.
std::map<std::string, std::string> renderKernelBenchNativePrompts(const std::vector<const Problem*>& problems, const PromptContext& context);

// One problem's chat and the sample indices wanted from it: what every generator (the built-in model,
// an endpoint) is given. `cuset refine`'s round r carries the feedback so far and asks for samples
// r*N .. r*N+N-1.
struct ChatJob {
  std::string problem;
  std::vector<ChatMessage> messages;
  std::vector<std::int64_t> samples;
};

// Every problem of a suite folder in `style`, samples 0..k-1 each; throws cuset::Error naming the
// folder when a problem does not load.
std::vector<ChatJob> suiteChatJobs(const std::filesystem::path& problemsDir, PromptStyle style, int samples, const PromptContext& context = {});

}  // namespace cuset
