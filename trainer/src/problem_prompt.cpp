#include "cuset/trainer/problem_prompt.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/evaluator/problem/problem.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/common/resources.hpp"

#include <nlohmann/json.hpp>
#include <cstdint>

namespace cuset {
namespace {

std::string tensorList(const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> parts;
  for (const auto& t : tensors) {
    std::vector<std::string> dims;
    for (const auto& d : t.shape) dims.push_back(d.text());
    parts.push_back(fmt::format("{} ({}, shape [{}])", t.name, dtypeName(t.dtype), fmt::join(dims, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Imported problems are asked KernelBench's way: the Model's Python source is the specification; the
// launch contract then names every input, the lifted parameters and buffers included.
std::string problemStatement(const Problem& p) {
  if (!p.origin || p.origin->source.empty()) return p.description;
  return fmt::format(
      "Implement the forward pass of this PyTorch Model ({} level {} problem {}, `{}`) as CUDA kernels. The module runs in "
      "training mode as constructed (BatchNorm uses batch statistics). Its parameters and buffers are not fixed: they "
      "are inputs of the kernel, named by their PyTorch paths.\n\n```python\n{}```",
      p.origin->suite, p.origin->level, p.origin->number, p.origin->file, p.origin->source);
}

std::string interfaceLines(const Problem& p) {
  std::vector<std::string> sizes;
  for (const auto& [name, value] : p.sizes("small")) sizes.push_back(fmt::format("{}={}", name, value));
  return fmt::format("Inputs: {}\nOutputs: {}\nSizes (names usable in the manifest), e.g. {}", tensorList(p.inputs), tensorList(p.outputs),
                     fmt::join(sizes, " "));
}

// KernelBench's one-shot example, in this project's answer format: a small architecture and the
// kernel that replaces it.
constexpr std::string_view kKernelBenchExample = R"(The example architecture:

```python
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b
```

Inputs: a (float32, shape [N]), b (float32, shape [N])
Outputs: out (float32, shape [N])

The example answer, the kernel with its launch manifest:

```cuda
/*@cuset
launches:
  - kernel: elementwise_add
    grid: [ceil_div(N, 256)]
    block: [256]
    args: [a, b, out, N]
*/
extern "C" __global__ void elementwise_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) out[i] = a[i] + b[i];
}
```)";

constexpr std::string_view kKernelBenchSystem =
    "You are an expert CUDA programmer. You write custom CUDA kernels that replace the PyTorch operators of a model to make "
    "it faster. You choose which operators to replace: some, or all of them; you may fuse several operators into one "
    "kernel (a matmul and the activation after it), or change the algorithm (an online softmax).";

std::string kernelBenchUser(const Problem& p) {
  const bool hasSource = p.origin && !p.origin->source.empty();
  const std::string architecture = hasSource ? fmt::format("```python\n{}```", p.origin->source) : p.description;
  return fmt::format(
      "Here is an example of the answer format.\n\n{}\n\nYou are given the following architecture:\n\n{}\n\n{}\n\n"
      "{}. The answer is device code only: no host code, no PyTorch extension and no Python; the kernels run in the order of "
      "the /*@cuset manifest's launches, on the inputs and outputs named above. Sizes vary between runs: use the size names "
      "(passed as int), never the example values. Answer with one ```cuda code block of real, complete code that compiles "
      "with NVRTC, not pseudocode.",
      kKernelBenchExample, architecture, interfaceLines(p),
      hasSource ? "Replace the forward pass of this architecture with CUDA kernels (the module runs in training mode as constructed; "
                  "its parameters and buffers are inputs, named by their PyTorch paths)"
                : "Implement it with CUDA kernels");
}

// The checkout KernelBench's prompts are rendered from: the one given, else the one the suite was
// imported from.
std::filesystem::path kernelBenchRoot(const PromptContext& c) {
  std::filesystem::path root = c.kernelbenchRoot;
  if (root.empty() && !c.problemsDir.empty() && std::filesystem::exists(c.problemsDir / "import-report.json")) {
    root = readJsonFile(c.problemsDir / "import-report.json").value("kernelbench_root", "");
  }
  if (root.empty()) {
    throw Error(
        "--prompt kernelbench-native renders KernelBench's own prompt from a KernelBench checkout: give it with --kernelbench DIR "
        "(the folder holding src/kernelbench/prompts/prompts.toml), or use a suite imported with `cuset import kernelbench`");
  }
  if (!std::filesystem::exists(root / "src" / "kernelbench" / "prompts" / "prompts.toml")) {
    throw makeError("{}: no src/kernelbench/prompts/prompts.toml (KernelBench's prompt templates): is this a KernelBench checkout?", root.string());
  }
  return root;
}

// KernelBench's precision option: fp16 or bf16 when every floating input is, else fp32.
std::string precisionOf(const Problem& p) {
  std::string found;
  for (const auto& t : p.inputs) {
    if (t.dtype != DType::float16 && t.dtype != DType::bfloat16 && t.dtype != DType::float32) continue;
    const std::string name = t.dtype == DType::float16 ? "fp16" : t.dtype == DType::bfloat16 ? "bf16" : "fp32";
    if (!found.empty() && found != name) return "fp32";
    found = name;
  }
  return found.empty() ? "fp32" : found;
}

}  // namespace

std::string renderProblemPrompt(const Problem& p) {
  return fmt::format(
      "Write a CUDA kernel for this problem.\n\n{}\n\n{}\n"
      "Answer with the kernel and its /*@cuset launch manifest, for example:\n"
      "/*@cuset\nlaunches:\n  - kernel: my_kernel\n    grid: [ceil_div(N, 256)]\n    block: [256]\n    args: [x, y, N]\n*/\n"
      "extern \"C\" __global__ void my_kernel(const float* x, float* y, int N) {{ ... }}",
      problemStatement(p), interfaceLines(p));
}

std::optional<PromptStyle> parsePromptStyle(std::string_view name) {
  if (name == "cuset") return PromptStyle::cuset;
  if (name == "kernelbench") return PromptStyle::kernelbench;
  if (name == "kernelbench-native") return PromptStyle::kernelbenchNative;
  return std::nullopt;
}

std::string_view promptStyleName(PromptStyle style) {
  switch (style) {
    case PromptStyle::cuset:
      return "cuset";
    case PromptStyle::kernelbench:
      return "kernelbench";
    case PromptStyle::kernelbenchNative:
      return "kernelbench-native";
  }
  return "?";
}

std::map<std::string, std::string> renderKernelBenchNativePrompts(const std::vector<const Problem*>& problems, const PromptContext& context) {
  const std::filesystem::path root = kernelBenchRoot(context);
  nlohmann::json request = {{"root", root.string()}, {"option", "one_shot"}, {"problems", nlohmann::json::array()}};
  for (const Problem* p : problems) {
    // KernelBench's architecture is its own file; a native problem has only its statement.
    const std::string source = p->origin && !p->origin->source.empty() ? p->origin->source : p->description;
    request["problems"].push_back({{"id", p->id}, {"source", source}, {"precision", precisionOf(*p)}});
  }
  const ScratchDir scratch(std::filesystem::temp_directory_path());
  writeFileAtomic(scratch.path() / "request.json", request.dump());
  const SubprocessResult run = runSubprocess(
      {pythonWithTorch(), resources().path("kb_prompt_script").string(), (scratch.path() / "request.json").string()}, std::chrono::seconds(120));
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(run.output);
  } catch (const nlohmann::json::exception&) {
    throw makeError("KernelBench's prompts from {}: the helper failed: {}", root.string(), run.output.substr(0, 400));
  }
  if (answer.contains("error")) throw makeError("KernelBench's prompts from {}: {}", root.string(), answer["error"].get<std::string>());
  return answer.at("prompts").get<std::map<std::string, std::string>>();
}

std::vector<ChatMessage> renderProblemChat(const Problem& p, PromptStyle style, const PromptContext& context) {
  switch (style) {
    case PromptStyle::cuset:
      return {{"user", renderProblemPrompt(p)}};
    case PromptStyle::kernelbench:
      return {{"system", std::string(kKernelBenchSystem)}, {"user", kernelBenchUser(p)}};
    case PromptStyle::kernelbenchNative:
      return {{"user", renderKernelBenchNativePrompts({&p}, context).at(p.id)}};
  }
  return {};
}

std::vector<ChatJob> suiteChatJobs(const std::filesystem::path& problemsDir, PromptStyle style, int samples, const PromptContext& context) {
  const ProblemSuite suite = ProblemSuite::load(problemsDir);
  suite.requireNoErrors();
  std::map<std::string, std::string> native;
  if (style == PromptStyle::kernelbenchNative) {
    std::vector<const Problem*> all;
    for (const auto& problem : suite.problems()) all.push_back(&problem);
    PromptContext withSuite = context;
    if (withSuite.problemsDir.empty()) withSuite.problemsDir = problemsDir;
    native = renderKernelBenchNativePrompts(all, withSuite);
  }
  std::vector<ChatJob> jobs;
  for (const auto& problem : suite.problems()) {
    ChatJob job{
        problem.id,
        style == PromptStyle::kernelbenchNative ? std::vector<ChatMessage>{{"user", native.at(problem.id)}} : renderProblemChat(problem, style),
        {}};
    for (std::int64_t s = 0; s < samples; ++s) job.samples.push_back(s);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace cuset
