#pragma once
// The instruction a model sees for a problem, shared by `cuset generate` (prompts) and `cuset data
// synth` (training instructions), so a model is trained on exactly the prompt form it is asked with.
#include <string>

namespace cuset {

struct Problem;

// Description, inputs and outputs with dtypes and shapes (and the small sizes), and the candidate-format
// contract with a short example.
std::string renderProblemPrompt(const Problem& problem);

}  // namespace cuset
