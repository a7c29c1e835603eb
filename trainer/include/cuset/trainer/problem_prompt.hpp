#pragma once
// The instruction a model sees for a problem, shared by `cuset generate` (prompts) and `cuset data
// synth` (training instructions), so a model is trained on exactly the prompt form it is asked with.
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
// Both ask for this project's candidate format: device code with a /*@cuset launch manifest.
enum class PromptStyle { cuset, kernelbench };
std::optional<PromptStyle> parsePromptStyle(std::string_view name);
std::string_view promptStyleName(PromptStyle style);
std::vector<ChatMessage> renderProblemChat(const Problem& problem, PromptStyle style);

}  // namespace cuset
