// `cuset generate`: from a checkpoint folder (the built-in model), or with --endpoint from any
// OpenAI-compatible chat endpoint.
#include <fmt/format.h>

#include "commands.hpp"
#include "endpoint_options.hpp"
#include "cuset/common/error.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_run_folder.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/models/endpoint_generation.hpp"
#include "cuset/trainer/generation.hpp"

namespace cuset::cli {
namespace {

void printEndpointSummary(const EndpointGenerateSummary& s, const std::string& out) {
  const double tokensPerSecond = s.seconds > 0 ? static_cast<double>(s.completionTokens) / s.seconds : 0.0;
  fmt::print(
      "{} samples for {} problems ({} reused, {} requested in {} requests, {} retries, {} failed{}); {} prompt + {} completion tokens{} "
      "in {:.1f} s ({:.0f} tokens/s) -> {}\n",
      s.samples, s.problems, s.reused, s.samples - s.reused, s.requests, s.retries, s.failed,
      s.nIgnored ? ", n not honoured: one request per sample" : "", s.promptTokens, s.completionTokens,
      s.usageMissing ? fmt::format(" (usage unknown for {} samples)", s.usageMissing) : "", s.seconds, tokensPerSecond, out);
}

}  // namespace

void registerGenerateCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<GenerateOptions>();
  auto e = std::make_shared<EndpointGenerateOptions>();
  auto model = std::make_shared<std::string>();
  auto prompt = std::make_shared<std::string>();
  auto noCache = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("generate", "Sample k kernels per problem from a model, as candidate JSONL for `cuset eval`");
  const auto flags = addEndpointOptions(cmd, *e);
  CLI::Option* endpoint = flags->endpoint;
  cmd->add_option("--model", *model, "HF model folder (config.json, model.safetensors, tokenizer.json), or with --endpoint the served model's name")
      ->required();
  cmd->add_option("--problems", o->problemsDir, "Problem suite folder")->required();
  cmd->add_option("--out", o->outFile, "Candidate JSONL to write (with --layout kernelbench: the run folder)")->required();
  auto layout = std::make_shared<std::string>("jsonl");
  cmd->add_option("--layout", *layout,
                  "jsonl (one candidate JSONL) or kernelbench (--out is a KernelBench run folder: level_L_problem_P_sample_S_kernel.py files "
                  "beside samples.jsonl, for KernelBench's eval_from_generations.py or `cuset eval`)")
      ->check(CLI::IsMember({"jsonl", "kernelbench"}))
      ->capture_default_str();
  cmd->add_option("--samples,-k", o->samples, "Responses per problem")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "Sampling temperature (0: greedy)")->capture_default_str();
  cmd->add_option("--top-p", o->topP, "Nucleus sampling threshold")->capture_default_str();
  cmd->add_option("--max-new-tokens,--max-tokens", o->maxNewTokens, "Tokens per response at most")->capture_default_str();
  CLI::Option* seed =
      cmd->add_option("--seed", o->seed, "Sampling seed (with --endpoint: sample i sends seed + i; default: none sent)")->capture_default_str();
  cmd->add_option("--model-name", o->modelName, "Model name in the candidates (default: the folder name, or the served model's name)");
  cmd->add_option(
         "--prompt", *prompt,
         "Prompt style: cuset, kernelbench or kernelbench-native (docs/prompts.md; default: cuset for a folder, kernelbench for an endpoint)")
      ->check(CLI::IsMember({"cuset", "kernelbench", "kernelbench-native"}));
  auto kernelbench = std::make_shared<std::filesystem::path>();
  cmd->add_option("--kernelbench", *kernelbench,
                  "kernelbench-native: the KernelBench checkout whose prompt templates to use (default: the suite's import)");
  cmd->add_option("--stop", o->stopStrings, "Stop strings: a response ends before the first one (repeatable)");
  cmd->add_flag("--quiet,-q", *quiet, "No progress bar");
  // Built-in model only.
  auto* threads = cmd->add_option("--threads", o->threads, "LibTorch threads (0: its default)");
  auto* device = cmd->add_option("--device", o->device, "cpu, cuda or auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}))->capture_default_str();
  auto* bf16 = cmd->add_flag("--bf16", o->bf16, "Run the model in bfloat16");
  auto* kv = cmd->add_flag("--no-kv-cache", *noCache, "Recompute the whole sequence each step (for comparison)");
  for (auto* option : {threads, device, bf16, kv}) option->excludes(endpoint);
  cmd->add_flag("--resume", e->resume, "Keep the finished samples of --out; request only the missing ones")->needs(endpoint);
  // KernelBench's layout: the JSONL (the generation's own record, which --resume reads) goes inside the
  // folder, and each sample's code beside it under KernelBench's file name.
  auto writeLayout = [layout, o](const std::filesystem::path& folder, const std::string& modelName) {
    if (*layout != "kernelbench") return;
    const KernelBenchRunFolderWrite w = writeKernelBenchRunFolder(readCandidates(o->outFile, modelName), ProblemSuite::load(o->problemsDir), folder);
    fmt::print("kernelbench layout: {} file(s) in {}{}\n", w.written, folder.string(),
               w.skipped.empty() ? "" : fmt::format(", {} skipped:", w.skipped.size()));
    for (const auto& why : w.skipped) fmt::print("  {}\n", why);
  };
  cmd->callback([=, &context] {
    const std::filesystem::path folder = o->outFile;
    if (*layout == "kernelbench") {
      std::filesystem::create_directories(folder);
      o->outFile = folder / "samples.jsonl";
    }
    if (endpoint->count() == 0) {
      o->modelDir = *model;
      o->useKvCache = !*noCache;
      o->showProgress = !*quiet;
      if (!prompt->empty()) o->prompt = *parsePromptStyle(*prompt);
      o->promptContext = {*kernelbench, o->problemsDir};
      const GenerateSummary s = runGeneration(*o);
      fmt::print("{} responses for {} problems, {} tokens in {:.1f} s ({:.0f} tokens/s) -> {}\n", s.responses, s.problems, s.generatedTokens,
                 s.seconds, s.seconds > 0 ? static_cast<double>(s.generatedTokens) / s.seconds : 0.0, o->outFile.string());
      writeLayout(folder, o->modelName.empty() ? std::filesystem::path(*model).filename().string() : o->modelName);
      context.exitCode = 0;
      return;
    }
    e->parameters.model = *model;
    e->parameters.temperature = o->temperature;
    e->parameters.topP = o->topP;
    e->parameters.maxTokens = o->maxNewTokens;
    if (seed->count() > 0) e->parameters.seed = o->seed;
    e->parameters.stop = o->stopStrings;
    e->problemsDir = o->problemsDir;
    e->outFile = o->outFile;
    e->modelLabel = o->modelName;
    e->samples = o->samples;
    e->prompt = prompt->empty() ? PromptStyle::kernelbench : *parsePromptStyle(*prompt);
    e->promptContext = {*kernelbench, o->problemsDir};
    applyEndpointFlags(*flags, *e);
    e->showProgress = !*quiet;
    const EndpointGenerateSummary s = runEndpointGeneration(*e);
    printEndpointSummary(s, e->outFile.string());
    writeLayout(folder, o->modelName.empty() ? *model : o->modelName);
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
